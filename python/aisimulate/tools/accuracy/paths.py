"""Where the shared data lives by default: ``../shared/data`` beside the repository."""

from __future__ import annotations

from pathlib import Path

_REPO = Path(__file__).resolve().parents[4]
SHARED_DATA = _REPO.parent / "shared" / "data"
DEFAULT_DATABASE = SHARED_DATA / "aic" / "systems"
DEFAULT_MODEL_CONFIGS = SHARED_DATA / "aic" / "model_configs"
