"""Join face models trained from different seeds into one ONNX file that reads each crop with all of them.

Run with ``python -m models.training.ensemble A.onnx B.onnx [...] --out DIR``: writes
``DIR/dice-faces-<id>.onnx`` (the id from the file's bytes, as every face model's) whose logits are the mean of the
members' logits: the runtime reads it as it reads one net, and nothing at run time changes. The mean of logits (not
of probabilities) is itself one fully connected layer on the members' embeddings side by side, so the joined file
still ends in the layer that teaching an owner's dice fits its head on (``vision.embedding``), with an embedding
that holds what every member saw.

Why: the same recipe trained from another seed reads the hard real sets as differently as another recipe does
(rune55 val 604 against 609 dice for two runs of one recipe, docs/classifier-log.md), so one run's mistakes are
partly its own. Averaged, the members are surer where they agree and less sure where they do not, which is the
reader's margin: a die the nets disagree on goes to the table (RULES.md R14) instead of one net's lucky guess.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion.core.files import atomic_write
from vision.classifier import file_model_id
from vision.model_files import ship


def join(members: list[Path]) -> bytes:
    """The bytes of one ONNX model reading with all of ``members`` (each a face model: input ``crops`` N×3×S×S, its
    last layer a fully connected one giving N×7 logits). Refuses, in words, fewer than two members or a file that
    is not such a model."""
    import numpy as np
    import onnx
    from onnx import TensorProto, compose, helper, numpy_helper

    if len(members) < 2:
        raise ValueError("An ensemble needs at least two face models.")
    models, nodes, inits, embeddings, weights, biases = [], [], [], [], [], []
    for i, path in enumerate(members):
        try:
            model = onnx.load(str(path))
        except Exception as e:  # onnx raises its own parse errors for a file that is not a model
            raise ValueError(f"{path} is not an ONNX model ({type(e).__name__}).") from None
        g = model.graph
        if len(g.input) != 1 or len(g.output) != 1:
            raise ValueError(f"{path} is not a face model: it has {len(g.input)} inputs and {len(g.output)} outputs.")
        model = compose.add_prefix(model, f"m{i}_")
        g = model.graph
        if models and g.input[0].type != models[0].graph.input[0].type:
            raise ValueError(f"{path} takes crops of another size than {members[0]}.")
        last = [n for n in g.node if g.output[0].name in n.output]
        attrs = {a.name: helper.get_attribute_value(a) for a in last[0].attribute} if last else {}
        if not last or last[0].op_type != "Gemm" or attrs.get("transA", 0) or len(last[0].input) != 3:
            raise ValueError(f"{path} is not a face model: it does not end in a fully connected layer.")
        values = {t.name: t for t in g.initializer}
        w_name, b_name = last[0].input[1], last[0].input[2]
        if w_name not in values or b_name not in values:
            raise ValueError(f"{path} is not a face model: its last layer's weights are not stored in it.")
        w = numpy_helper.to_array(values[w_name]).astype(np.float32) * attrs.get("alpha", 1.0)
        w = w if attrs.get("transB", 0) else w.T
        b = numpy_helper.to_array(values[b_name]).astype(np.float32) * attrs.get("beta", 1.0)
        if w.shape[0] != 7 or b.shape != (7,):
            raise ValueError(f"{path} is not a face model: it gives {w.shape[0]} classes, not 7.")
        rename = {g.input[0].name: "crops"}
        for node in g.node:
            if node is not last[0]:
                node.input[:] = [rename.get(n, n) for n in node.input]
                nodes.append(node)
        inits.extend(t for t in g.initializer if t.name not in (w_name, b_name))
        embeddings.append(last[0].input[0])
        weights.append(w)
        biases.append(b)
        models.append(model)
    # The mean of the members' logits is one fully connected layer on their embeddings side by side.
    k = float(len(members))
    nodes += [helper.make_node("Concat", embeddings, ["embedding"], axis=1),
              helper.make_node("Gemm", ["embedding", "weight", "bias"], ["logits"], transB=1)]
    inits += [numpy_helper.from_array(np.concatenate(weights, axis=1) / k, "weight"),
              numpy_helper.from_array(np.sum(biases, axis=0) / k, "bias")]
    shape = ["n", *[d.dim_value for d in models[0].graph.input[0].type.tensor_type.shape.dim[1:]]]
    crops = helper.make_tensor_value_info("crops", TensorProto.FLOAT, shape)
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 7])
    graph = helper.make_graph(nodes, "face_ensemble", [crops], [logits], inits)
    opset = max(o.version for m in models for o in m.opset_import if o.domain in ("", "ai.onnx"))
    joined = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                               producer_name="elephants-bluff models.training.ensemble")
    joined.ir_version = models[0].ir_version
    onnx.checker.check_model(joined)
    return joined.SerializeToString()


def write(members: list[Path], out: Path) -> Path:
    """Write the joined model to ``out/dice-faces-<id>.onnx`` (atomically) and return its path; in a models folder (one
    with a ``shipped.json``) it becomes the shipped face model."""
    data = join(members)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "dice-faces-ensemble.onnx.tmp"
    atomic_write(tmp, data)
    final = out / f"{file_model_id(tmp)}.onnx"
    tmp.replace(final)
    ship(final, "faces")  # into a models folder: named in its shipped.json, the model it replaces removed
    return final


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("members", type=Path, nargs="+", help="two or more face models (.onnx)")
    ap.add_argument("--out", type=Path, required=True, help="folder for the joined model")
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.members if not p.is_file()]
    if missing:
        ap.error("no such model file: " + ", ".join(missing))
    try:
        path = write(args.members, args.out)
    except ValueError as e:
        print(f"ensemble: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size} bytes) from {len(args.members)} models")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
