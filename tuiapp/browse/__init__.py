"""The post-run browser."""
