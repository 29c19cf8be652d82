"""Files written whole: the one atomic write of decbounds. A killed run leaves the old file or the new one,
and the new file gets the user's mode (``0o666`` less the umask), not a temporary file's ``0o600``.
"""

from __future__ import annotations

import os
import pathlib
import tempfile
import threading

__all__ = ["atomic_write_bytes", "user_file_mode"]

_UMASK_LOCK = threading.Lock()


def user_file_mode() -> int:
    """The mode a new regular file gets here, ``0o666 & ~umask`` (read from /proc on Linux, else by setting
    and restoring the umask under a lock).

    Examples
    --------
    >>> user_file_mode() & 0o600
    384
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> pathlib.Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``; creates the
    folder; returns ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The destination.
    data : bytes
        The whole content.

    Examples
    --------
    >>> import shutil
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_bytes(folder / "a" / "note.txt", b"done").read_text()
    'done'
    >>> shutil.rmtree(folder)
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), user_file_mode())
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
    return path
