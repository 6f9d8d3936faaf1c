"""The `hushtable` command line: sim, replay, run, worker, export."""
import typer

app = typer.Typer(no_args_is_help=True, help="Hushtable: hidden-information word games for humans and AI.")


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo("hushtable 0.1.0")
