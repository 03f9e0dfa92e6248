"""Media listed beside a conversation (LLaMA-Factory's `images`, `videos` and `audios` columns; LLaVA's one
`image`): each `<image>` (`<video>`, `<audio>`) tag in the turns stands for the next item of its list, in
order; when no turn has a tag, LLaMA-Factory puts them all before the first message's text, and so does
this. An image's placeholder is `image_placeholder`'s; a video's or a sound's `[video: path]`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.importers._common import image_placeholder


class SideImages:
    """Hands out the listed images (or videos, or sounds: `kind`) to their tags in the turns, in order."""

    def __init__(self, images: Any, texts: Iterable[Any] = (), kind: str = "image") -> None:
        listed = [images] if isinstance(images, str) else images if isinstance(images, list) else []
        self.kind, self.tag = kind, f"<{kind}>"
        self.notes = [{"url": i} if isinstance(i, str) else {"type": "unknown"} for i in listed]
        self.used = 0
        self.untagged = bool(self.notes) and not any(isinstance(t, str) and self.tag in t for t in texts)

    def fill(self, text: str) -> tuple[str, list[dict[str, Any]]]:
        """The text with each tag replaced by its item's placeholder; the items' notes."""
        if self.untagged and self.used == 0:
            text = self.tag * len(self.notes) + text
        if not self.notes or self.tag not in text:
            return text, []
        parts = text.split(self.tag)
        taken: list[dict[str, Any]] = []
        out = [parts[0]]
        for rest in parts[1:]:
            if self.used < len(self.notes):
                note = self.notes[self.used]
                self.used += 1
                taken.append(note)
                out.append(self._placeholder(note) if "url" in note else self.tag)
            else:
                out.append(self.tag)
            out.append(rest)
        return "".join(out), taken

    def _placeholder(self, note: dict[str, Any]) -> str:
        return image_placeholder(note) if self.kind == "image" else f"[{self.kind}: {note['url']}]"

    @property
    def unused(self) -> int:
        return len(self.notes) - self.used
