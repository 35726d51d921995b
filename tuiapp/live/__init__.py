"""The live view of a paired run."""
