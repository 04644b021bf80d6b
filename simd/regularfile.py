"""Reading a file simd is given (a scenario file, a token file, the state file): never blocking, only a regular
file, never more than a cap.

``open()`` of a FIFO blocks until a writer comes, and reading ``/dev/urandom`` or ``/dev/zero`` never ends: a
path that names either would hold whoever reads it (the main thread at start, the reload lock, an HTTP
thread). So the file is opened with ``O_NONBLOCK`` (a FIFO opens at once; a regular file ignores the flag),
must then be a regular file (``fstat``), and is read up to ``limit + 1`` bytes: more is refused, as is a size
``fstat`` already shows over the limit (a sparse file of a gigabyte is not read at all). With
``follow=False`` a symlink is refused too (``O_NOFOLLOW``: the state directory's files).

The kernel's pseudo-files (procfs, sysfs and their kind: ``/proc/self/environ``, ``/proc/self/maps``) pass for
regular files of size 0 and hold the reading process's secrets (its environment, with ``SIMD_API_TOKEN``): a file
on one of :data:`PSEUDO_FILESYSTEMS` (its device matched in ``/proc/self/mountinfo``, so a symbolic link or
another mount point of the same filesystem is caught too) is refused unread.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# The kernel's filesystems whose files are generated on read (proc(5), sysfs(5), and the like from the kernel's
# Documentation/filesystems): none holds a file simd is meant to read.
PSEUDO_FILESYSTEMS = frozenset({"proc", "sysfs", "debugfs", "tracefs", "securityfs", "configfs", "cgroup", "cgroup2",
                                "bpf", "efivarfs", "pstore", "binfmt_misc", "fusectl", "mqueue", "devpts"})
MOUNTINFO = "/proc/self/mountinfo"


class Refused(OSError):
    """The path is not a regular file, or it is larger than the limit; ``str()`` says which, in one line."""


def read(path: str | Path, limit: int, *, follow: bool = True) -> bytes:
    """The file's bytes. Refused (an OSError) when it is not a regular file or holds more than ``limit``
    bytes; other OSErrors (missing, permission) as ``open`` raises them."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise Refused(errno.ELOOP, "a symbolic link (refused: it could point anywhere)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(errno.EINVAL, f"not a regular file (a {_kind(st.st_mode)})")
        if (fs := _filesystem(st.st_dev)) in PSEUDO_FILESYSTEMS:
            raise Refused(errno.EINVAL, f"a pseudo-file of the kernel ({fs}), not a regular file")
        if st.st_size > limit:
            raise Refused(errno.EFBIG, f"larger than {limit} bytes ({st.st_size})")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise Refused(errno.EFBIG, f"larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _filesystem(dev: int) -> str | None:
    """The type of the mounted filesystem of device ``dev`` (mountinfo's major:minor), None when unknown (no
    /proc: then no procfs to refuse either)."""
    key = f"{os.major(dev)}:{os.minor(dev)}"
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="replace") as f:
            for line in f:  # "36 35 98:0 /root /mnt rw,noatime master:1 - ext3 /dev/root rw"
                fields = line.split()
                if len(fields) > 2 and fields[2] == key and " - " in line:
                    return line.split(" - ", 1)[1].split()[0]
    except (OSError, IndexError):
        return None
    return None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


# --- writing: what simd is told to write (``--out``) ---------------------------------------------------------------
# The same rules from the other side: a path is checked before any work (a directory is created and probed with a
# temporary file; a file's folder probed, and an existing file must be a regular one: a FIFO would block the
# open, a device would take the bytes or refuse them after the work), and a file is written whole or not at all
# (a temporary beside it, renamed over it), so a write that fails leaves what was there.


def writable_dir(path: str | Path) -> Path:
    """``path`` as a directory files can be written in: created (with its parents) if missing, probed with a
    temporary file. OSError (one line in ``strerror``) when it cannot be."""
    import tempfile

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise Refused(errno.ENOTDIR, "not a directory")
    out.mkdir(parents=True, exist_ok=True)
    tempfile.TemporaryFile(dir=out).close()
    return out


def writable_file(path: str | Path) -> Path:
    """``path`` as a file :func:`write` can write: its folder exists and takes a temporary file, and the path is
    missing or a regular file (through symbolic links). OSError when not (Refused: not a regular file)."""
    import tempfile

    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise Refused(errno.EINVAL, f"not a regular file (a {_kind(st.st_mode)})")
    if not target.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"no directory {target.parent}")
    tempfile.TemporaryFile(dir=target.parent).close()
    return target


def write(path: str | Path, data: bytes) -> None:
    """``data`` as the file ``path`` (checked as :func:`writable_file` does), whole or not at all: written to a
    temporary file in its folder, then renamed over it (with the mode the file had, or the one a plain ``open``
    gives a new file); on any OSError the temporary is removed and the path keeps what it held."""
    import contextlib
    import tempfile

    target = writable_file(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
