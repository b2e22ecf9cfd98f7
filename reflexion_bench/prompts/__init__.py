"""Prompt packs: the project's own prompts, kept in files, loadable from any external pack."""

from reflexion_bench.prompts.loader import (
    PromptError,
    PromptPack,
    builtin_packs,
    fill,
    load_pack,
    load_prompts,
)

__all__ = ["PromptError", "PromptPack", "builtin_packs", "fill", "load_pack", "load_prompts"]
