"""Which certificate authorities TLS trusts: the public ones (certifi's bundle, as httpx
trusts by default) and, with ``REVIEWBOT_CA_BUNDLE``, a private CA's too, for a
self-managed GitLab, GitHub Enterprise Server or model server behind one. The HTTP
clients take an SSL context; git takes one file, so the two bundles are joined in the
data folder."""

from __future__ import annotations

import ssl
from pathlib import Path

import certifi

from app.config import Settings
from app.errors import ConfigError


def ssl_context(settings: Settings) -> ssl.SSLContext | bool:
    """What an httpx client verifies TLS with: True (the public CAs) or a context that
    also trusts ``REVIEWBOT_CA_BUNDLE``; ``ConfigError`` when that is not a PEM bundle."""
    if settings.ca_bundle is None:
        return True
    context = ssl.create_default_context(cafile=certifi.where())
    try:
        context.load_verify_locations(cafile=str(settings.ca_bundle))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"REVIEWBOT_CA_BUNDLE {settings.ca_bundle} is not a readable PEM file of CA"
            f" certificates ({type(exc).__name__})"
        ) from None
    return context


def git_ca_file(settings: Settings) -> Path | None:
    """The file git verifies TLS with (``GIT_SSL_CAINFO``): the public CAs and
    ``REVIEWBOT_CA_BUNDLE`` joined under the data folder; None for git's own."""
    if settings.ca_bundle is None:
        return None
    ssl_context(settings)  # refuses a file that is not a bundle
    joined = Path(certifi.where()).read_bytes() + b"\n" + settings.ca_bundle.read_bytes()
    path = settings.data_dir / "tls" / "ca-bundle.pem"
    if not path.is_file() or path.read_bytes() != joined:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(joined)
    return path
