"""SQL: whether a link stored at index time (``chunk_links``, ``app/indexing/links.py``)
resolves to a definition at a given place, by how the link says it is found (a file, a
module, a package's directory, a Rust module, a C header's namesake file, a C#
namespace in scope) and by its qualifier. The structural signal (``links.py``) and the
class hierarchy (``hierarchy.py``) join on it."""

from __future__ import annotations

from app.indexing.links import EXTENSION, GLOBAL, GLOBAL_USING

#: A file's directory.
_DIR = r"regexp_replace({path}, '/?[^/]*$', '')"
#: A JavaScript or TypeScript module's place: its path without ``/index`` and extension.
STEM = r"regexp_replace({path}, '(/index)?\.(d\.)?[cm]?[jt]sx?$', '')"
#: A Rust module's place (``app/indexing/rust_modules.py`` ``rust_stem``).
RUST_STEM = r"regexp_replace({path}, '(/(mod|lib|main))?\.rs$', '')"
#: A C or C++ file's name without its extension (``link_cfamily.header_stem``).
_CSTEM = r"regexp_replace({path}, '^(.*/)?|\.[^./]*$', '', 'g')"
#: A qualified name with ``::`` and the spaces of ``impl Trait for Type`` read as dots.
_DOTTED = "replace(replace({qualified}, '::', '.'), ' ', '.')"


#: The rows of the namespaces the repository's ``global using`` directives bring in
#: (``g.target``).
_GLOBAL_USINGS = (
    f"chunk_links g WHERE g.repository_id = :r AND g.name = '{GLOBAL_USING}' AND g.kind = 'global'"
)


def resolves(path: str, qualified: str, language: str) -> str:
    """SQL: link ``l`` resolves to a definition at ``path`` named ``qualified``. A C#
    qualifier led by ``GLOBAL`` stands for each namespace a ``global using`` of the
    repository (``:r``) brings in; a C# ``EXTENSION`` link resolves to the extension
    methods of its name stored in a namespace its file has in scope (its ``target``) or a
    ``global using`` brings in."""
    directory = _DIR.format(path=path)
    dotted = _DOTTED.format(qualified=qualified)
    return f"""(CASE l.match
        WHEN 'file' THEN {path} = l.target
        WHEN 'module' THEN {path} = l.target
            OR right({path}, length(l.target) + 1) = '/' || l.target
        WHEN 'stem' THEN {STEM.format(path=path)} = l.target
        WHEN 'dir' THEN {directory} = l.target AND {language} = 'go'
        WHEN 'pkgdir' THEN {directory} = l.target
            OR right({directory}, length(l.target) + 1) = '/' || l.target
        WHEN 'rsmod' THEN {RUST_STEM.format(path=path)} = l.target
        WHEN 'cstem' THEN {_CSTEM.format(path=path)} = l.target
        WHEN '{EXTENSION}' THEN {dotted} IN (
            SELECT e.qualifier || '.' || l.name FROM chunk_links e
            WHERE e.repository_id = :r AND e.name = l.name AND e.kind = '{EXTENSION}'
            AND (position('|' || e.target || '|' IN l.target) > 0
                OR e.target IN (SELECT g.target FROM {_GLOBAL_USINGS})))
        WHEN 'package' THEN {language} = 'go' AND (CASE WHEN {directory} = ''
            THEN {qualified} LIKE l.qualifier || '.%'
            ELSE l.target = {directory}
                OR right(l.target, length({directory}) + 1) = '/' || {directory}
            END)
        ELSE true END)
    AND (l.qualifier IS NULL OR l.match = 'package' OR {dotted} = l.qualifier || '.' || l.name
         OR right({dotted}, length(l.qualifier) + length(l.name) + 2)
            = '.' || l.qualifier || '.' || l.name
         OR (left(l.qualifier, 1) = '{GLOBAL}' AND {dotted} IN (
            SELECT g.target || substr(l.qualifier, 2) || '.' || l.name
            FROM {_GLOBAL_USINGS})))"""
