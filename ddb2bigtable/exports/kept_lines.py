"""Data files' lines kept from one read for one more pass, within a fixed number of bytes.

The loader's encoders read each file of a fresh load twice: for type inference, then for
its rows. A file whose lines are kept from the first read is read, hashed and inflated
once. `reader` fills a `KeptLines` as it reads and empties it on the next pass.
"""

from __future__ import annotations

KEPT_LINE_COST = 64  # a kept line's bytes object header (33 bytes), its list slot and malloc's rounding


class KeptLines:
    """Data files' lines, at most `budget` bytes in all (their decompressed bytes, and
    KEPT_LINE_COST a line for its object).

    Given as `keep` to a read (`reader.scan_items`, `reader.read_records`), a file kept here
    is not read again: its lines come from here, once, and are released (their bytes are
    not given back to the budget: it bounds what is ever kept). Any other file is read
    from its store and kept if that read hashed it (`digest`), read it to its end with its
    md5 right, and its lines fit in what the budget has left: a kept file needs no check of
    its own, and with one read there is no second one for a file replaced in between to
    slip into."""

    def __init__(self, budget: int) -> None:
        self.left = budget
        self._files: dict[str, list[bytes | None]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._files

    def take(self, key: str) -> list[bytes | None]:
        """A kept file's lines, no longer kept here."""
        return self._files.pop(key)

    def kept(self, key: str, keeping: Keeping) -> None:
        """Keep a file read to its end with its md5 right, if its lines fit."""
        if keeping.lines is not None:
            self._files[key], self.left = keeping.lines, keeping.room


class Keeping:
    """One file's lines as they are read, while they fit in `room` bytes (`lines` None past it)."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.lines: list[bytes | None] | None = [] if room > 0 else None

    def add(self, lines: list[bytes | None], size: int) -> None:
        """Lines read, `size` decompressed bytes (a step of the gzip stream at once)."""
        if self.lines is not None:
            self.room -= size + KEPT_LINE_COST * len(lines)
            if self.room < 0:
                self.lines = None
            else:
                self.lines += lines
