"""Readable stand-in answers for the demo servers: in the prompt's language, the same every
time for the same prompt, so an operator trying the demo sees text that looks like work."""

from __future__ import annotations

import random
import zlib

_ZH = (
    "先抓住用户最在意的一个痛点，再用一个具体场景把它讲透。",
    "标题控制在20字以内，把数字和结果放在最前面。",
    "开头三秒给出冲突或反差，中段给证据，结尾给一个可执行的动作。",
    "避免空泛的形容词，换成可以被验证的细节，比如价格、时长、前后对比。",
    "同一条内容准备两个版本的封面文案，发布后按点击率留下更好的那一个。",
    "评论区预设一个问题引导互动，比发布时间更影响早期流量。",
    "把卖点翻译成用户能说出口的话，读起来像朋友推荐而不是广告。",
)
_EN = (
    "Lead with the one outcome the reader cares about, then prove it with a concrete scene.",
    "Keep the headline under ten words and put the number first.",
    "Open with a contrast in the first three seconds, give evidence in the middle, end with one action.",
    "Swap vague adjectives for details that can be checked: price, time, before and after.",
    "Draft two cover lines and keep whichever earns the better click-through after posting.",
    "Seed the comments with a question; it moves early reach more than the posting time does.",
    "Say the selling point the way a friend would, not the way an advert would.",
)


def demo_answer(prompt: str, sentences: int = 3) -> str:
    """A short answer of ``sentences`` sentences, seeded by the prompt."""
    if sentences <= 0:
        return ""
    chinese = any("\u4e00" <= ch <= "\u9fff" for ch in prompt)
    pool = _ZH if chinese else _EN
    rng = random.Random(zlib.crc32(prompt.encode()))
    picked = [pool[rng.randrange(len(pool))] for _ in range(sentences)]
    return ("" if chinese else " ").join(picked)
