"""What the advisor says: findings, each resting on a passage of the design seeds.

A finding is a value, not a log line: a stable `code` (README lists them all), a
severity, the table, the evidence (numbers from the spec or the sample), the seed section
it comes from, and what to change, with a mapping snippet where the mapping can do it.
The seeds are the documents this project was built from (`../shared/seeds/`); citing the
file and its heading lets a reviewer check the advice against its source.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")


@dataclass(frozen=True)
class Seed:
    """A section of one seed document: file name, heading as written there, and in English."""

    file: str
    heading: str
    english: str

    def __str__(self) -> str:
        return f"{self.file} § {self.heading} ({self.english})"


_DESIGN = "003_fe54338615fd5aa3.txt"  # Bigtable schema design best practices (Spanish)
_DYNAMODB = "000_7580fef94578bc3b.txt"  # Bigtable for DynamoDB users (Spanish)

KEYS_TO_AVOID = Seed(_DESIGN, "Claves de fila que debes evitar", "Row keys to avoid")
TIME_BASED = Seed(_DESIGN, "Datos basados en el tiempo", "Time-based data")
ROW_KEYS = Seed(_DESIGN, "clave(s) de fila", "Row keys")
ROWS = Seed(_DESIGN, "Filas", "Rows")
TABLES = Seed(_DESIGN, "Tables", "Tables")
FAMILIES = Seed(_DESIGN, "Familias de columnas", "Column families")
COLUMNS = Seed(_DESIGN, "Columnas", "Columns")
MULTI_TENANCY = Seed(_DESIGN, "Multiusuario", "Multi-tenancy")
GENERAL = Seed(_DESIGN, "Conceptos generales", "General concepts")
PRIVACY = Seed(_DESIGN, "Privacidad", "Privacy")
DOMAIN_NAMES = Seed(_DESIGN, "Nombres de dominio", "Domain names")
DATA_ORDER = Seed(_DYNAMODB, "Ordenación de datos", "Data sorting: write sharding is salting")
SINGLE_TABLE = Seed(_DYNAMODB, "Patrón de diseño de una sola tabla", "Single table design pattern")
VERSIONING = Seed(_DYNAMODB, "Control de las versiones de los datos", "Data versioning")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    table: str  # the spec's table id; an instance id for stage-wide (cost) findings
    evidence: str
    seed: Seed
    suggestion: str
    snippet: str = ""  # YAML for the spec's `mapping`, when the mapping can express the fix

    def at_least(self, severity: str) -> bool:
        return SEVERITIES.index(self.severity) >= SEVERITIES.index(severity)


def percent(part: int, whole: int) -> str:
    """A share as evidence reads it: `96 %`, never `100 %` unless it is all of them."""
    share = 100 * part / whole if whole else 0.0
    return f"{share:.0f} %" if part in (0, whole) or 1 <= share <= 99 else f"{share:.1f} %"
