"""Images listed beside a conversation (LLaMA-Factory's `images` column): each `<image>` tag in the turns
stands for the next image of the list, in order; when no turn has a tag, LLaMA-Factory puts them all before
the first message's text, and so does this."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.importers._common import image_placeholder

IMAGE_TAG = "<image>"


class SideImages:
    """Hands out the listed images to the `<image>` tags of the turns, in order."""

    def __init__(self, images: Any, texts: Iterable[Any] = ()) -> None:
        listed = images if isinstance(images, list) else []
        self.notes = [{"url": i} if isinstance(i, str) else {"type": "unknown"} for i in listed]
        self.used = 0
        self.untagged = bool(self.notes) and not any(isinstance(t, str) and IMAGE_TAG in t for t in texts)

    def fill(self, text: str) -> tuple[str, list[dict[str, Any]]]:
        """The text with each `<image>` tag replaced by its image's placeholder; the images' notes."""
        if self.untagged and self.used == 0:
            text = IMAGE_TAG * len(self.notes) + text
        if not self.notes or IMAGE_TAG not in text:
            return text, []
        parts = text.split(IMAGE_TAG)
        taken: list[dict[str, Any]] = []
        out = [parts[0]]
        for rest in parts[1:]:
            if self.used < len(self.notes):
                note = self.notes[self.used]
                self.used += 1
                taken.append(note)
                out.append(image_placeholder(note) if "url" in note else IMAGE_TAG)
            else:
                out.append(IMAGE_TAG)
            out.append(rest)
        return "".join(out), taken

    @property
    def unused(self) -> int:
        return len(self.notes) - self.used
