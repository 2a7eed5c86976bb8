"""Hand-made archives for the archive-reader tests: ZIPs whose headers say what the test wants
(lying sizes, any method, any flag), and decompression bombs built in well under a second by
repeating independent compressed blocks instead of compressing a gigabyte of zeros."""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import zlib

MiB = 1024 * 1024

# ZIP compression methods
STORED, DEFLATED, BZIP2, LZMA = 0, 8, 12, 14


def zip_archive(members: list[dict]) -> bytes:
    """A ZIP from raw member specs: ``name`` (bytes), ``data`` (the compressed bytes as stored),
    ``method``, ``crc``, ``size`` (declared uncompressed size), ``flags``."""
    local = bytearray()
    central = bytearray()
    for m in members:
        name, data = m["name"], m["data"]
        method, flags = m.get("method", STORED), m.get("flags", 0)
        crc, size = m.get("crc", 0), m.get("size", len(data))
        offset = len(local)
        version = 63 if method == LZMA else 46 if method == BZIP2 else 20
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", version, flags, method, 0, 0x21, crc, len(data), size,
                             len(name), 0)
        local += name + data
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", version, version, flags, method, 0, 0x21, crc,
                               len(data), size, len(name), 0, 0, 0, 0, 0o644 << 16, offset)
        central += name
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0)
    return bytes(local + central + eocd)


def member(name: str | bytes, payload: bytes, method: int = DEFLATED, *, size: int | None = None,
           flags: int = 0) -> dict:
    """A member spec holding ``payload`` compressed with ``method`` (declared ``size`` if given)."""
    if method == STORED:
        data = payload
    elif method == DEFLATED:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        data = c.compress(payload) + c.flush()
    elif method == BZIP2:
        data = bz2.compress(payload, 9)
    elif method == LZMA:
        data = lzma_member_data(payload)
    else:
        raise ValueError(method)
    raw_name = name.encode("utf-8") if isinstance(name, str) else name
    return {"name": raw_name, "data": data, "method": method, "crc": zlib.crc32(payload),
            "size": len(payload) if size is None else size, "flags": flags}


def lzma_member_data(payload: bytes) -> bytes:
    """ZIP's LZMA member layout: version 9.20, properties size 5, LZMA1 properties, raw stream."""
    lc, lp, pb, dict_size = 3, 0, 2, 1 << 20
    c = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA1, "preset": 0, "lc": lc, "lp": lp,
                                                        "pb": pb, "dict_size": dict_size}])
    stream = c.compress(payload) + c.flush()
    return b"\x09\x14\x05\x00" + bytes([(pb * 5 + lp) * 9 + lc]) + struct.pack("<I", dict_size) + stream


# --------------------------------------------------------------------------------------------
# bombs
# --------------------------------------------------------------------------------------------
def bzip2_bomb(total: int, block: int = 32 * MiB) -> bytes:
    """A one-stream bzip2 body of ``total`` zero bytes (a multiple of ``block``): the compressed
    block of ``block`` zeros repeated at bit level, with the combined stream CRC recomputed."""
    assert total % block == 0
    data = bz2.compress(b"\0" * block, 9)
    nbits = len(data) * 8
    bits = int.from_bytes(data, "big")
    for pad in range(8):
        eos = nbits - pad - 80
        if (bits >> (nbits - eos - 48)) & ((1 << 48) - 1) == 0x177245385090:
            break
    else:  # pragma: no cover - bzip2 always ends with the end-of-stream magic
        raise AssertionError("no bzip2 end-of-stream marker")
    length = eos - 32
    block_bits = (bits >> (nbits - eos)) & ((1 << length) - 1)
    block_crc = (bits >> (nbits - 112)) & 0xFFFFFFFF
    out, combined = int.from_bytes(data[:4], "big"), 0
    for _ in range(total // block):
        out = (out << length) | block_bits
        combined = (((combined << 1) | (combined >> 31)) & 0xFFFFFFFF) ^ block_crc
    out = (((out << 48) | 0x177245385090) << 32) | combined
    width = 32 + (total // block) * length + 80
    out <<= (-width) % 8
    return out.to_bytes((width + 7) // 8, "big")


def deflate_bomb(total: int, block: int = 16 * MiB) -> bytes:
    """A raw deflate stream of ``total`` zero bytes: one fully flushed (byte-aligned, dictionary
    reset) segment repeated, then an empty final block."""
    assert total % block == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = c.compress(b"\0" * block) + c.flush(zlib.Z_FULL_FLUSH)
    return segment * (total // block) + b"\x03\x00"


def gzip_members_bomb(total: int, block: int = 16 * MiB) -> bytes:
    """``total`` zero bytes as many gzip members of ``block`` bytes each."""
    assert total % block == 0
    return gzip.compress(b"\0" * block, compresslevel=9, mtime=0) * (total // block)


def lying_zip(data: bytes, method: int, declared: int = 1000, name: str = "movie.srt") -> bytes:
    """A ZIP of one member whose compressed bytes are ``data`` but whose headers declare ``declared``."""
    return zip_archive([{"name": name.encode(), "data": data, "method": method, "crc": 0, "size": declared}])
