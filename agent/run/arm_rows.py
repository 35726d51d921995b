"""An arm's ledger row: inserted when a new run opens the arm; when resuming, the recorded row is
picked up again (tokens used, busy time, censoring) and refreshed with the server just started.
The columns are agent/ledger/rows.py's."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agent.ledger.rows import arm_opened, arm_reopened
from agent.ledger.store import new_id, to_json
from agent.run.quota import CensoredBy
from agent.run.strategies import strategy_columns
from agent.states import ArmState

if TYPE_CHECKING:
    from agent.run.arms import ArmRuntime
    from agent.run.host import RunHost


async def register_arm(host: RunHost, arm: ArmRuntime) -> None:
    """Insert the arm's row, or for a resumed run take its recorded state back into `arm`."""
    listed = await arm.client.list_models()
    existing = host.resume_state.arms.get(arm.name) if host.resume_state else None
    if existing is None:  # a new run, or one killed before this arm's row was written
        cfg = arm.config
        arm.arm_id = new_id()
        opened = arm_opened(
            arm.arm_id,
            host.run_id,
            arm.name,
            kind=cfg.kind,
            protocol=cfg.protocol,
            endpoint_url=arm.endpoint_url,
            model=arm.client.settings.model,
            models_listed_json=to_json(listed),
            sampling_json=to_json(cfg.sampling()),
            price_json=to_json(cfg.price),
            constants_json=to_json(arm.constants),
            cap_tokens=arm.quota.cap,
            server_session_id=arm.session_id,
            max_attempts=host.config.max_attempts,
            **strategy_columns(cfg),
        )
        await host.ledger.write(opened)
        return
    arm.arm_id = existing["id"]
    arm.quota.used = existing["tokens_used"]  # lost attempts' tokens included: they were spent
    arm.busy_ms = existing["busy_ms"] or 0
    arm.paced_ms = existing.get("paced_ms") or 0
    arm.cap_raises = json.loads(existing.get("cap_raises_json") or "[]")
    topped_up = existing.get("censored_by") == CensoredBy.PROVIDER_QUOTA
    arm.state = ArmState.CENSORED if existing["censored"] and not topped_up else ArmState.RUNNING
    refreshed = arm_reopened(
        arm.arm_id,
        topped_up,
        models_listed_json=to_json(listed),
        endpoint_url=arm.endpoint_url,
        server_session_id=arm.session_id,
    )
    await host.ledger.write(refreshed)
