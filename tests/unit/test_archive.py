"""Archives are read member by member and never unpacked: hostile ones are contained."""

from __future__ import annotations

import gzip
import io
import tarfile
import tracemalloc
import zlib
from collections.abc import Iterator

import pytest

from app.indexing.archive import (
    ArchiveError,
    ArchiveLimits,
    ArchiveStats,
    ArchiveTooLarge,
    TarballSource,
    archive_files,
    member_path,
)
from app.indexing.source_tree import RepoConfig, parse_repo_config

MIB = 1024 * 1024


def tar_bytes(
    entries: list[tarfile.TarInfo | tuple[str, bytes]], fmt: int = tarfile.PAX_FORMAT
) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                name, data = entry
                info = tarfile.TarInfo(name)
                info.size, info.mtime = len(data), 1_700_000_000
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def special(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def files_of(
    data: bytes, config: RepoConfig | None = None, **limits: int
) -> list[tuple[str, str | None, bytes]]:
    found = archive_files(
        io.BytesIO(data), config or RepoConfig(), ArchiveLimits(**limits), strip_top=False
    )
    return [(f.path, f.skipped, f.read()) for f in found]


def test_regular_files_are_read_in_order_with_their_bytes() -> None:
    data = tar_bytes([("a.py", b"def a():\n    return 1\n"), ("pkg/b.go", b"package pkg\n")])
    assert files_of(data) == [
        ("a.py", None, b"def a():\n    return 1\n"),
        ("pkg/b.go", None, b"package pkg\n"),
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/passwd", None),
        ("/etc/passwd", None),
        ("a/../../b.py", None),
        ("a\\..\\b.py", None),
        ("./src/./x.py", "src/x.py"),
        ("src//x.py", "src/x.py"),
    ],
)
def test_member_names_are_normalised_or_refused(name: str, expected: str | None) -> None:
    assert member_path(name, strip_top=False) == expected


def test_top_folder_is_stripped_for_github_tarballs() -> None:
    assert member_path("acme-shop-1a2b3c/shop/x.py", strip_top=True) == "shop/x.py"
    assert member_path("acme-shop-1a2b3c/", strip_top=True) is None


def test_traversal_links_and_devices_are_skipped_and_counted_never_followed() -> None:
    data = tar_bytes(
        [
            ("../escape.py", b"import os\n"),
            ("/abs.py", b"import os\n"),
            special("link.py", tarfile.SYMTYPE, "/etc/passwd"),
            special("hard.py", tarfile.LNKTYPE, "../../etc/shadow"),
            special("dev/null.py", tarfile.CHRTYPE),
            special("fifo.py", tarfile.FIFOTYPE),
            ("ok.py", b"x = 1\n"),
        ]
    )
    got = files_of(data)
    assert [(skipped, body) for _, skipped, body in got] == [
        ("unsafe path", b""),
        ("unsafe path", b""),
        ("link", b""),
        ("link", b""),
        ("special file", b""),
        ("special file", b""),
        (None, b"x = 1\n"),
    ]


def test_member_over_max_file_bytes_is_skipped_without_reading() -> None:
    config = parse_repo_config("[index]\nmax_file_bytes = 100\n")
    data = tar_bytes([("big.py", b"x" * 5000), ("small.py", b"y = 2\n")])
    assert files_of(data, config) == [
        ("big.py", "too large (5000 bytes > 100)", b""),
        ("small.py", None, b"y = 2\n"),
    ]


def test_config_filters_and_pruned_folders_apply() -> None:
    config = parse_repo_config('[index]\nexclude = ["docs/**"]\n')
    data = tar_bytes(
        [
            ("docs/a.py", b"a\n"),
            ("node_modules/x/i.js", b"x\n"),
            (".git/config", b"c\n"),
            ("s.py", b"s\n"),
        ]
    )
    assert [path for path, _, _ in files_of(data, config)] == ["s.py"]


def bomb_stream(members: int, member_bytes: int) -> Iterator[bytes]:
    """A gzip file of a tar whose members are all zeros: each MiB of zeros compresses to
    about 1 KiB (concatenated gzip members make one valid gzip file)."""
    zero_mib = gzip.compress(b"\0" * MIB, compresslevel=9)
    for i in range(members):
        info = tarfile.TarInfo(f"zeros/{i}.py")
        info.size = member_bytes
        yield gzip.compress(info.tobuf(format=tarfile.PAX_FORMAT))
        for _ in range(member_bytes // MIB):
            yield zero_mib
    yield gzip.compress(b"\0" * 1024)  # end-of-archive blocks


def test_gzip_bomb_stops_at_the_total_cap_with_bounded_memory() -> None:
    archive = b"".join(bomb_stream(members=64, member_bytes=64 * MIB))  # 4 GiB of zeros
    assert len(archive) < 8 * MIB  # a small archive...
    stats = ArchiveStats()
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveTooLarge, match="expands to more than"):
            for _ in archive_files(
                gzip.GzipFile(fileobj=io.BytesIO(archive)),
                RepoConfig(),
                ArchiveLimits(max_total_bytes=512 * MIB),
                stats=stats,
            ):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stats.total_bytes > 512 * MIB and stats.members == 9  # ...refused at the 9th header
    print(f"gzip bomb: {len(archive)} bytes in, peak traced memory {peak / MIB:.1f} MiB")
    assert peak < 16 * MIB


def test_many_tiny_files_stop_at_the_member_cap() -> None:
    data = tar_bytes([(f"f{i}.py", b"x\n") for i in range(50)])
    with pytest.raises(ArchiveTooLarge, match="more than 20 members"):
        files_of(data, max_members=20)


def test_truncated_archive_is_an_archive_error() -> None:
    data = gzip.compress(tar_bytes([("a.py", b"a = 1\n" * 1000)]))
    with pytest.raises(ArchiveError, match="cannot be read"):
        files_of(data[: len(data) // 2])


def test_tarball_source_reports_git_commit_and_config() -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit}
    ) as tar:
        for name, body in [("acme-shop-0123456/", b""), ("acme-shop-0123456/a.py", b"a = 1\n")]:
            info = tarfile.TarInfo(name)
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    buffer.seek(0)
    source = TarballSource(
        "acme/shop@main", buffer, b'[index]\nexclude = ["x/**"]\n', ArchiveLimits()
    )
    config = source.config()
    assert config.exclude == ("x/**",)
    assert [f.path for f in source.files(config)] == ["a.py"]
    assert source.commit() == commit


def _header_bomb(kind: bytes, size: int) -> bytes:
    """A gzip of one header of ``kind`` (GNU long name, pax) claiming ``size`` bytes, and
    those bytes: a small archive that tarfile would read whole into memory."""
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = kind, size
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    out = [packer.compress(info.tobuf(format=tarfile.GNU_FORMAT))]
    chunk = b"a" * MIB
    out += [packer.compress(chunk) for _ in range(size // MIB)]
    out.append(packer.flush())
    return b"".join(out)


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE])
def test_a_long_name_or_pax_header_is_refused_before_it_is_read(kind: bytes) -> None:
    archive = _header_bomb(kind, 256 * MIB)
    assert len(archive) < 2 * MIB  # 256 MB of name in a small download
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveTooLarge, match="long-name or pax header"):
            list(archive_files(io.BytesIO(archive), RepoConfig(), ArchiveLimits(), strip_top=True))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MIB


def test_a_member_that_breaks_while_it_is_read_is_an_archive_error() -> None:
    whole = gzip.compress(tar_bytes([("a.py", b"x = 1\n" * 50_000), ("b.py", b"y = 2\n")]))
    broken = whole[: len(whole) // 2]  # cut in the middle of a.py's data
    files = archive_files(io.BytesIO(broken), RepoConfig(), ArchiveLimits())
    first = next(files)
    with pytest.raises(ArchiveError, match=r"cannot be read in member 'a\.py': ReadError"):
        first.read()  # read later, by the indexer, outside the archive's own loop


def _checksummed(header: bytearray) -> bytes:
    header[148:156] = b" " * 8
    header[148:155] = f"{sum(header):06o}\0".encode()
    return bytes(header)


def _old_gnu_sparse_bomb(extensions: int) -> bytes:
    """An old-GNU sparse member whose map goes on for ``extensions`` blocks of 512 bytes,
    each saying another follows: tarfile reads them all before the first byte of data."""
    info = tarfile.TarInfo("src/big.py")
    info.size = 0
    header = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    header[156:157] = tarfile.GNUTYPE_SPARSE
    header[482] = 1  # an extension block follows
    block = bytearray(512)
    block[0:12], block[12:24] = b"00000000000\0", b"00000000001\0"
    block[504] = 1  # and another after it
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(_checksummed(header))]
    out += [packer.compress(bytes(block)) for _ in range(extensions)]
    out.append(packer.flush())
    return b"".join(out)


def test_an_old_gnu_sparse_member_is_refused_before_its_map_is_read() -> None:
    archive = _old_gnu_sparse_bomb(50_000)  # 25 MB of map in a small download
    assert len(archive) < 2 * MIB
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveError, match=r"'src/big\.py' is a sparse file"):
            list(archive_files(io.BytesIO(archive), RepoConfig(), ArchiveLimits()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MIB


@pytest.mark.parametrize(
    "pax",
    [
        {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": "10"},
        {"GNU.sparse.map": "0,1", "GNU.sparse.size": "10"},
        {"GNU.sparse.size": "10", "GNU.sparse.numblocks": "1"},
    ],
)
def test_a_pax_sparse_member_is_refused(pax: dict[str, str]) -> None:
    info = tarfile.TarInfo("src/sparse.py")
    info.size, info.pax_headers = 4, pax
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b"data"))
    data = buffer.getvalue()
    with pytest.raises(ArchiveError, match="is a sparse file"):
        files_of(data)


def test_a_truncated_archive_names_the_member_it_broke_in() -> None:
    data = tar_bytes([("a.py", b"a = 1\n"), ("b.py", b"b = 2\n" * 200)])
    with pytest.raises(ArchiveError, match=r"cannot be read in member 'b\.py'"):
        files_of(data[: 1536 + 100])
