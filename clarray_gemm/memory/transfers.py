"""The process-wide transfer counters (bytes between host and device memory, map calls) and
the byte formatting the messages use."""
from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["TransferStats", "transfer_stats", "reset_transfer_stats", "count_transfer",
           "format_bytes"]


@dataclass
class TransferStats:
    """Bytes copied between host memory and device memory, and map calls made."""

    host_to_device: int = 0
    device_to_host: int = 0
    device_to_device: int = 0
    maps: int = 0

    def copy(self) -> "TransferStats":
        return TransferStats(self.host_to_device, self.device_to_host, self.device_to_device,
                             self.maps)

    def __sub__(self, other: "TransferStats") -> "TransferStats":
        return TransferStats(self.host_to_device - other.host_to_device,
                             self.device_to_host - other.device_to_host,
                             self.device_to_device - other.device_to_device,
                             self.maps - other.maps)


_stats = TransferStats()
_stats_lock = threading.Lock()


def transfer_stats() -> TransferStats:
    """A snapshot of the process-wide byte counters (subtract two snapshots for a delta)."""
    with _stats_lock:
        return _stats.copy()


def reset_transfer_stats() -> None:
    """Set the process-wide byte counters back to zero."""
    global _stats
    with _stats_lock:
        _stats = TransferStats()


def count_transfer(host_to_device: int = 0, device_to_host: int = 0,
                   device_to_device: int = 0, maps: int = 0) -> None:
    """Add to the process-wide counters."""
    with _stats_lock:
        _stats.host_to_device += host_to_device
        _stats.device_to_host += device_to_host
        _stats.device_to_device += device_to_device
        _stats.maps += maps


def format_bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it at least 1 (e.g. ``'1.5 GiB'``)."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} B"
