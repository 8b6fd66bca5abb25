"""mediaassist: batches of AI generation tasks, each lane gated by what its provider can bear."""

__version__ = "0.1.0"
