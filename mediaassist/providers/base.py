"""The provider interface, re-exported from ``mediaassist.core.lane_api`` (where the scheduler
reads it too, without importing any provider)."""

from mediaassist.core.lane_api import Provider, StopReason, TaskContext, TaskResult

__all__ = ["Provider", "StopReason", "TaskContext", "TaskResult"]
