"""Shared by bench/plots/<op>.py (not an operation: bench/plot.py skips names starting with _)."""
import os


def tag(machine):
    """The machine line as a file-name part."""
    return "".join(c if c.isalnum() else "_" for c in machine)[:40]


def save(fig, plt, out_dir, name, paths):
    """Lays out, writes out_dir/name, closes the figure and records the path."""
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
