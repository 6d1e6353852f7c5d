"""The recording layer: a small FUSE filesystem that holds loop images and records every
write and every flush the loop driver sends them.

A loop device over an image in this mount turns each write the filesystem above it
submits into a write here, and each flush (a journal commit, an fsync reaching the
device) into an ``fsync`` of the image (drivers/block/loop.c: ``vfs_fsync`` on a flush
request). The filesystem is mounted with ``direct_io``, so no page cache sits between
the loop driver and this process: what arrives here, in this order, is what reached the
device. One thread serves every request, so a flush arrives after every write that
completed before it.

Passed through to a backing directory, so the images work as any loop image. Recording
starts and stops by a write to the control file ``.pgfsbench-recorder`` at the mount's
root: ``start DIR`` copies each image to ``DIR/<name>.base`` (the state every crash state
starts from; take it right after a sync) and from then on appends every operation to
``DIR``'s write log (``writelog.py``); ``stop`` closes the log. Reading the control file
says how much was recorded. A flush costs nothing here (the host's durability is not what
is tested), so the timings of a recorded target are not performance figures.

Run as ``python -m pgfsbench.crash.recorder BACKING MOUNTPOINT`` (foreground; the
provisioning side, ``recording.py``, starts and stops it).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import BinaryIO

CONTROL = ".pgfsbench-recorder"
CONTROL_PATH = "/" + CONTROL
CONTROL_FH = 2**40  # no real descriptor is this large
CHUNK = 8 << 20


def sparse_copy(src: str, dst: str) -> int:
    """Copy ``src`` to ``dst`` keeping its holes; returns the data bytes copied."""
    copied = 0
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        size = os.fstat(fin.fileno()).st_size
        fout.truncate(size)
        pos = 0
        while pos < size:
            try:
                start = os.lseek(fin.fileno(), pos, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # only a hole is left
                    break
                raise
            end = os.lseek(fin.fileno(), start, os.SEEK_HOLE)
            while start < end:
                chunk = os.pread(fin.fileno(), min(CHUNK, end - start), start)
                os.pwrite(fout.fileno(), chunk, start)
                start += len(chunk)
                copied += len(chunk)
            pos = end
    return copied


class Recorder:
    """The FUSE operations (mfusepy's high-level API, one thread)."""

    use_ns = True

    def __init__(self, backing: str) -> None:
        self.root = backing
        self.recording: Path | None = None
        self.index: BinaryIO | None = None
        self.data: BinaryIO | None = None
        self.data_pos = 0
        self.ids: dict[str, int] = {}  # image path -> file id while recording
        self.by_fd: dict[int, str] = {}  # open descriptor -> its path
        self.counts = {"writes": 0, "flushes": 0, "bytes": 0}
        self.status: dict = {"recording": False}
        self.control_reply = b""

    # --- helpers
    def _real(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def _log(self, op: int, fd: int, offset: int, data: bytes | None) -> None:
        from pgfsbench.crash.writelog import RECORD

        file_id = self.ids.get(self.by_fd.get(fd, ""))
        if file_id is None or self.index is None or self.data is None:
            return
        length = len(data) if data is not None else 0
        self.index.write(RECORD.pack(time.monotonic(), op, file_id, offset, length, self.data_pos))
        if data is not None:
            self.data.write(data)
            self.data_pos += length
            self.counts["writes"] += 1
            self.counts["bytes"] += length
        else:
            self.counts["flushes"] += 1

    def _start(self, where: str) -> None:
        from pgfsbench.crash.writelog import DATA, FILES, INDEX

        self._stop()
        recording = Path(where)
        recording.mkdir(parents=True, exist_ok=True)
        names = sorted(
            n for n in os.listdir(self.root) if stat.S_ISREG(os.lstat(self._real(n)).st_mode)
        )
        files = []
        for name in names:
            sparse_copy(self._real(name), str(recording / f"{name}.base"))
            files.append({"name": name, "size": os.path.getsize(self._real(name))})
        (recording / FILES).write_text(json.dumps({"files": files}))
        self.ids = {"/" + n: i for i, n in enumerate(names)}
        self.index = open(recording / INDEX, "wb")
        self.data = open(recording / DATA, "wb")
        self.data_pos = 0
        self.counts = {"writes": 0, "flushes": 0, "bytes": 0}
        self.recording = recording
        self.status = {"recording": True, "dir": where, "files": names}

    def _stop(self) -> None:
        for f in (self.index, self.data):
            if f is not None:
                f.close()
        self.index = self.data = None
        if self.recording is not None:
            self.status = {"recording": False, "dir": str(self.recording), **self.counts}
        self.recording = None
        self.ids = {}

    def _control(self, text: str) -> int:
        words = text.strip().split(" ", 1)
        try:
            if words[0] == "start" and len(words) == 2:
                self._start(words[1])
            elif words[0] == "stop":
                self._stop()
            else:
                self.status = {**self.status, "error": f"unknown command {text.strip()!r}"}
                return -errno.EINVAL
        except OSError as exc:
            self.status = {"recording": False, "error": str(exc)}
            return -errno.EIO
        return len(text)

    def _status_bytes(self) -> bytes:
        live = {**self.status, **(self.counts if self.recording else {})}
        return (json.dumps(live) + "\n").encode()

    # --- FUSE operations
    def getattr(self, path: str, fh: int | None = None) -> dict:
        if path == CONTROL_PATH:
            now = time.time_ns()
            return {
                "st_mode": stat.S_IFREG | 0o600,
                "st_nlink": 1,
                "st_size": 4096,
                "st_atime": now,
                "st_mtime": now,
                "st_ctime": now,
            }
        try:
            st = os.lstat(self._real(path))
        except OSError as exc:
            raise _fuse_error(exc.errno) from None
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks")
        found = {k: getattr(st, k) for k in keys}
        found.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        return found

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", CONTROL, *os.listdir(self._real(path))]

    def open(self, path: str, flags: int) -> int:
        if path == CONTROL_PATH:
            self.control_reply = self._status_bytes()
            return CONTROL_FH
        try:
            fd = os.open(self._real(path), flags & ~(os.O_DIRECT | os.O_SYNC | os.O_DSYNC))
        except OSError as exc:
            raise _fuse_error(exc.errno) from None
        self.by_fd[fd] = path
        return fd

    def create(self, path: str, mode: int, fi: object = None) -> int:
        try:
            fd = os.open(self._real(path), os.O_CREAT | os.O_RDWR | os.O_TRUNC, mode)
        except OSError as exc:
            raise _fuse_error(exc.errno) from None
        self.by_fd[fd] = path
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        if fh == CONTROL_FH:
            return self.control_reply[offset : offset + size]
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        if fh == CONTROL_FH:
            return self._control(data.decode(errors="replace"))
        from pgfsbench.crash.writelog import WRITE

        written = os.pwrite(fh, data, offset)
        if self.recording is not None:
            self._log(WRITE, fh, offset, data[:written])
        return written

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if path == CONTROL_PATH:
            return 0
        os.truncate(self._real(path), length)
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        from pgfsbench.crash.writelog import FLUSH

        if self.recording is not None and fh != CONTROL_FH:
            self._log(FLUSH, fh, 0, None)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def release(self, path: str, fh: int) -> int:
        if fh != CONTROL_FH:
            self.by_fd.pop(fh, None)
            os.close(fh)
        return 0

    def unlink(self, path: str) -> int:
        os.unlink(self._real(path))
        return 0

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._real(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.chown(self._real(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        if path != CONTROL_PATH:
            if times is None:
                os.utime(self._real(path))
            else:
                os.utime(self._real(path), ns=times)
        return 0

    def statfs(self, path: str) -> dict:
        st = os.statvfs(self.root)
        keys = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree")
        return {k: getattr(st, k) for k in keys} | {"f_namemax": st.f_namemax}

    def destroy(self, path: str) -> None:
        self._stop()


def _fuse_error(code: int | None) -> Exception:
    import mfusepy  # type: ignore[import-untyped]  # mfusepy ships no type information

    return mfusepy.FuseOSError(code or errno.EIO)


def main(argv: list[str]) -> int:
    import mfusepy

    backing, mountpoint = argv
    mfusepy.FUSE(
        Recorder(backing),
        mountpoint,
        foreground=True,
        nothreads=True,
        direct_io=True,
        fsname="pgfsbench-recorder",
        big_writes=True,
        max_write=1 << 20,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
