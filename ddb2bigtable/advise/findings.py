"""What the advisor says: findings, each resting on a section of one of Google's public pages.

A finding is a value, not a log line: a stable `code` (docs/advise.md lists them all), a
severity, the table, the evidence (numbers from the spec or the sample), the source it
comes from, and what to change, with a mapping snippet where the mapping can do it.
The source is the English page and section a user can open; the seed (the translation
of that page this project was built from, `../shared/seeds/`) stays beside it for the
JSON's version-1 `seed` field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")

# When the pages' URLs and titles were checked in a search of Google's English
# documentation, with Schema design's sections that public links name (docs/cli.md lists
# them); the other section titles are the English headings the seeds translate.
CHECKED = "2026-11-25"


@dataclass(frozen=True)
class Page:
    """One of Google's public pages."""

    title: str
    url: str


# Seeds 002 (Italian) and 003 (Spanish) translate it.
SCHEMA_DESIGN = Page("Schema design best practices", "https://cloud.google.com/bigtable/docs/schema-design")
# Seeds 000 (Spanish), 001 (Japanese) and 004 (Korean) translate it; its newer version, at
# the same URL, is titled "Migrate from DynamoDB to Bigtable".
DYNAMODB_USERS = Page("Bigtable for DynamoDB users", "https://cloud.google.com/bigtable/docs/dynamodb-users")


@dataclass(frozen=True)
class Source:
    """A section of a public page: its English title, and where the Spanish seed has it
    (file and heading as written there: the JSON's `seed`)."""

    page: Page
    section: str
    seed_file: str
    seed_heading: str

    def __str__(self) -> str:
        return f"{self.page.title} § {self.section}: {self.page.url}"


def _design(section: str, heading: str) -> Source:
    return Source(SCHEMA_DESIGN, section, "003_fe54338615fd5aa3.txt", heading)  # the Spanish translation


def _dynamodb(section: str, heading: str) -> Source:
    return Source(DYNAMODB_USERS, section, "000_7580fef94578bc3b.txt", heading)  # the Spanish translation


KEYS_TO_AVOID = _design("Row keys to avoid", "Claves de fila que debes evitar")
TIME_BASED = _design("Time-based data", "Datos basados en el tiempo")
ROW_KEYS = _design("Row keys", "clave(s) de fila")
ROWS = _design("Rows", "Filas")
TABLES = _design("Tables", "Tables")
FAMILIES = _design("Column families", "Familias de columnas")
COLUMNS = _design("Columns", "Columnas")
MULTI_TENANCY = _design("Multi-tenancy", "Multiusuario")
GENERAL = _design("General concepts", "Conceptos generales")
PRIVACY = _design("Privacy", "Privacidad")
DOMAIN_NAMES = _design("Domain names", "Nombres de dominio")
DATA_PLANE = _dynamodb("Data plane", "Plano de datos")  # its table: a global secondary index
DATA_SORTING = _dynamodb("Data sorting", "Ordenación de datos")
SINGLE_TABLE = _dynamodb("Single table design pattern", "Patrón de diseño de una sola tabla")
VERSIONING = _dynamodb("Data versioning", "Control de las versiones de los datos")


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    table: str  # the spec's table id; an instance id for stage-wide (cost) findings
    evidence: str
    source: Source
    suggestion: str
    snippet: str = ""  # YAML for the spec's `mapping`, when the mapping can express the fix

    def at_least(self, severity: str) -> bool:
        return SEVERITIES.index(self.severity) >= SEVERITIES.index(severity)


def percent(part: int, whole: int) -> str:
    """A share as evidence reads it: `96 %`, never `100 %` unless it is all of them."""
    share = 100 * part / whole if whole else 0.0
    return f"{share:.0f} %" if part in (0, whole) or 1 <= share <= 99 else f"{share:.1f} %"
