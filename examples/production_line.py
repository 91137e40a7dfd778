#!/usr/bin/env python3
"""Seed 000's production line through the Python module, frame by frame: the capsule found in
each frame and its colour verdict, as a CSV (the same bytes as
``./main video CLIP TEMPLATE --color blue --csv --no-time``) and a plot of the score and the
blue fraction per frame (matplotlib, where it is installed).

  bin/parvis-gen line 1920x1080 line.y4m --template line_tpl.ppm
  PYTHONPATH=. python3 examples/production_line.py line.y4m line_tpl.ppm \\
      --csv line.csv --plot line.png [--version cuda-opt]
"""
import argparse
import sys

import parvis


def number(f):
    """A fraction as ./main prints it: the shortest text that reads back the same double."""
    text = repr(f)
    return text[:-2] if text.endswith(".0") else text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clip")
    ap.add_argument("template")
    ap.add_argument("--csv", required=True, help="per-frame results")
    ap.add_argument("--plot", help="score and blue fraction per frame (.png)")
    ap.add_argument("--version", default=None, help="one of parvis.versions() (default seq)")
    args = ap.parse_args()

    matcher = parvis.Matcher(parvis.read_image(args.template), color="blue", version=args.version)
    scores, fractions = [], []
    with open(args.csv, "w") as out:
        out.write("frame,x,y,score,matching,total,fraction,verdict\n")
        for i, frame in enumerate(parvis.frames(args.clip)):
            m = matcher.run(frame).matches[0]
            out.write("%d,%d,%d,%d,%d,%d,%s,%s\n" % (i, m.x, m.y, m.score, m.matching, m.total,
                                                    number(m.fraction), "full" if m.full else "empty"))
            scores.append(m.score)
            fractions.append(m.fraction)
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("production_line: matplotlib is not installed, no plot", file=sys.stderr)
            return 0
        fig, ax = plt.subplots(figsize=(9, 4))
        ax.plot(scores, color="tab:red")
        ax.set_xlabel("frame")
        ax.set_ylabel("SSD of the best match", color="tab:red")
        ax2 = ax.twinx()
        ax2.plot(fractions, color="tab:blue")
        ax2.set_ylabel("blue fraction", color="tab:blue")
        ax2.axhline(0.2, color="tab:blue", linestyle=":", linewidth=1)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
