"""`import`: DynamoDB table definitions in, one spec v1 out (a file or stdout).

Warnings (every estimate, every setting a spec cannot hold, what a source cannot tell) go
to stderr, one line each, so stdout stays the spec when no `-o` is given.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..sources.aws.clients import DEFAULT_DAYS, LiveOptions
from ..sources.detect import KINDS, all_tables, read_sources
from ..sources.emit import build, to_json, to_yaml
from ..sources.export_types import DEFAULT_SAMPLE, add_mappings, sample_export
from ..sources.model import DEFAULT_REGION, Options
from ..sources.spec_file import check_spec
from ..spec.errors import InputError, Problem
from ..spec.ids import id_problem
from ..spec.output_file import check_output, write_output
from .output import echo_warning


def _parameters(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key:
            raise InputError([Problem.about("--parameter", "", f"{value!r} is not KEY=VALUE")])
        pairs.append((key, text))
    return tuple(pairs)


@click.command("import")
@click.argument("source", nargs=-1, required=True)
@click.option("--instance", required=True, help="The Bigtable instance id the spec describes (6-33 characters).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the spec here (atomically). Default: stdout.")
@click.option("--from", "kind", type=click.Choice(KINDS),
              help="Source kind. Default: detected from each file's content.")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]),
              help="yaml (a comment on every value) or json. Default: json for an -o ending in .json, else yaml.")
@click.option("--force", is_flag=True, help="Replace an existing -o file.")
@click.option("--parameter", "parameters", multiple=True, metavar="KEY=VALUE",
              help="A CloudFormation template parameter or Terraform variable (repeatable); others take their "
                   "default.")
@click.option("--var-file", "var_files", multiple=True, metavar="FILE",
              help="Terraform: a .tfvars file of variable values (repeatable), read after terraform.tfvars and "
                   "*.auto.tfvars and before --parameter, as Terraform reads them.")
@click.option("--region",
              help=f"The AWS region of templates and of Terraform tables whose provider names none. Default: "
                   f"{DEFAULT_REGION}, with a warning.")
@click.option("--days", type=click.IntRange(1, 455), default=DEFAULT_DAYS, show_default=True,
              help="Live tables: the CloudWatch window for peak and average traffic (p99 and mean per second).")
@click.option("--endpoint-url", default=None,
              help="Live tables: the DynamoDB endpoint (DynamoDB Local). Default: AWS_ENDPOINT_URL_DYNAMODB, else "
                   "AWS's.")
@click.option("--metrics-endpoint-url", default=None,
              help="Live tables: the CloudWatch and Application Auto Scaling endpoint. Default: "
                   "AWS_ENDPOINT_URL_CLOUDWATCH / AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING, else AWS's.")
@click.option("--export", "exports", multiple=True, metavar="PATH",
              help="A DynamoDB export (folder, gs:// or s3://) of an imported table (repeatable): attribute types "
                   "sampled from it go into the table's mapping.attributes where they are consistent.")
@click.option("--sample", type=click.IntRange(1), default=DEFAULT_SAMPLE, show_default=True,
              help="Items to sample from each --export.")
def import_(source: tuple[str, ...], instance: str, output: Path | None, kind: str | None, fmt: str | None,
            force: bool, parameters: tuple[str, ...], var_files: tuple[str, ...], region: str | None, days: int,
            endpoint_url: str | None, metrics_endpoint_url: str | None, exports: tuple[str, ...], sample: int) -> None:
    """Make a spec from DynamoDB tables: live ones (`aws://REGION/TABLE`, `aws://REGION/*`,
    through boto3 and CloudWatch), `aws dynamodb describe-table` output, CloudFormation/SAM
    templates, Terraform `.tf` files or `terraform show -json` output.
    Every value's comment names its origin; every estimate is marked and warned about."""
    wrong_id = id_problem("instance", instance)
    if wrong_id:
        raise InputError([Problem.about("--instance", "", wrong_id)])
    options = Options(region, _parameters(parameters), var_files)
    if output is not None:
        check_output(output, force=force, command="import")
    found = read_sources(list(source), options, kind, LiveOptions(days, endpoint_url, metrics_endpoint_url))
    tables = all_tables(found)
    doc = add_mappings(build(instance, tables, list(source)), tables, [sample_export(e, sample) for e in exports])
    text = to_json(doc) if (fmt or ("json" if output and output.suffix == ".json" else "yaml")) == "json" \
        else to_yaml(doc)
    notices = [n for i in found for n in i.notices] + list(doc.notices)
    for notice in notices:  # first: a value the check refuses is often an estimate its warning explains
        echo_warning(str(notice))
    check_spec(text, ", ".join(source))
    if output is None:
        click.echo(text, nl=False)
        return
    write_output(output, text, force=force, command="import", what="the spec")
    estimates = sum(n.code == "estimate" for n in notices)
    click.echo(f"wrote {output}: {len(doc.tree['tables'])} table(s), {estimates} estimate(s) to replace; "
               f"next: ddb2bigtable validate {output}", err=True)
