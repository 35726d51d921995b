"""Run configuration: TOML (stdlib tomllib) loaded into frozen dataclasses that validate on load.

Types and bounds are declared once, on the dataclass fields (`Annotated[..., Meta(...)]`), and
checked by msgspec in strict mode: no string is split into letters, no "yes" is a bool, no 1.5e3
is an int, no value past its bound (or past 2**63) reaches the engine. Every problem is one
ConfigError line naming the file, the key, the value and the fix, raised before anything is
written. Secrets are referenced by environment-variable NAME (`api_key_env`) and never read here.
docs/config.md documents every key.

model.py    the dataclasses, the arm kinds and the shared constants
convert.py  TOML values into a dataclass, each problem as one ConfigError line
load.py     load_config: a whole config read, converted and checked
"""

from agent.config.load import load_config, load_config_text
from agent.config.model import (
    ARM_KINDS,
    AUTO_PAUSE_POLICIES,
    DEFAULT_PREFLIGHT_BUDGET,
    MAX_CAP_TOKENS,
    MAX_CONCURRENCY,
    PROMPT_TEMPLATE_VERSION,
    ArmConfig,
    ArmKind,
    ConfigError,
    EndpointKnobs,
    Limits,
    LlamaCppSettings,
    RunConfig,
    ScriptedSettings,
    ValidateSettings,
    price_problem,
)

__all__ = [
    "ARM_KINDS",
    "AUTO_PAUSE_POLICIES",
    "DEFAULT_PREFLIGHT_BUDGET",
    "MAX_CAP_TOKENS",
    "MAX_CONCURRENCY",
    "PROMPT_TEMPLATE_VERSION",
    "ArmConfig",
    "ArmKind",
    "ConfigError",
    "EndpointKnobs",
    "Limits",
    "LlamaCppSettings",
    "RunConfig",
    "ScriptedSettings",
    "ValidateSettings",
    "load_config",
    "load_config_text",
    "price_problem",
]
