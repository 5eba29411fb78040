"""`$NAME` in the user's message loads that skill into the message.

The skill's body (and the list of files beside it) is added as a second text part of
the user message, which is stored as sent: the system prompt is untouched, so the
cached prefix holds. Unknown names (`$HOME`) are left alone.
"""

from __future__ import annotations

from wyckoff_cli.context.skills import SkillCatalog, mention_blocks
from wyckoff_cli.core.messages import Message, TextPart
from wyckoff_cli.runtime.hooks import RuntimeHooks


class SkillMentions(RuntimeHooks):
    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    async def before_run(self, user_message: Message) -> Message | None:
        if user_message.meta.get("synthetic"):
            return None
        blocks = mention_blocks(user_message.text, self.catalog)
        if not blocks:
            return None
        return Message(
            user_message.role,
            (*user_message.parts, TextPart(blocks)),
            meta={
                **user_message.meta,
                "skills": [s.name for s in self.catalog.skills if f"${s.name}" in user_message.text],
            },
            id=user_message.id,
        )
