"""Battle Line certificate files."""

from battlejudge.proofs.battleline.certificate import (
    CERTIFICATE_FORMAT,
    SCHEMA_VERSION,
    CertificateFile,
    from_file_model,
    load_certificate,
    save_certificate,
    to_file_model,
    verify_bounded,
    verify_file,
)

__all__ = [
    "CERTIFICATE_FORMAT",
    "SCHEMA_VERSION",
    "CertificateFile",
    "from_file_model",
    "load_certificate",
    "save_certificate",
    "to_file_model",
    "verify_bounded",
    "verify_file",
]
