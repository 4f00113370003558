"""The note filter's English, markup and order patterns, as regular-expression sources.

store/safety/instructions.py folds and compiles them (on first use) and reads a note with them:
`LINE` at the start of each line, `TEXT` anywhere in the whole note with its lines joined.
Other languages are in store/safety/instruction_languages.py.
"""

from __future__ import annotations

from typing import Final

from store.safety.instruction_kinds import KINDS
from store.safety.instruction_languages import CLAUSE as _G
from store.safety.instruction_languages import OVERRIDES, SOURCES


def _any(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


_AI: Final = _any(
    r"ai", r"a\.i\.", r"llms?", r"(?:large )?language models?", r"(?:ai |coding )?assistants?",
    r"(?:ai )?agents?", r"models?", r"bots?", r"chatbots?", r"claude", r"chatgpt", r"gpt", r"gemini",
    r"copilot", r"codex",
)  # fmt: skip

# (verbs, earlier-rule words before the target, targets, words after the target) per language;
# the phrase is verb … qualifier+ target, or verb … target qualifier.
_ENGLISH: Final = (
    r"ignor(?:e|ing)|disregard(?:ing)?|forget(?:ting)?|overrid(?:e|es|ing)|overrule|bypass(?:ing)?|"
    r"circumvent(?:ing)?|discard(?:ing)?|neglect(?:ing)?|abandon(?:ing)?|dismiss(?:ing)?|drop|"
    r"set(?:ting)? aside|put aside|throw (?:out|away)|pay(?:ing)? no (?:attention|heed|mind) to|"
    r"take no notice of|stop (?:following|obeying|applying|respecting)|disobey|defy|"
    r"(?:do not|don't|dont|no longer|never) (?:follow|obey|apply|respect|heed)",
    r"previous(?:ly)?|prior|earlier|above|preceding|foregoing|former|original|initial|all|any|"
    r"every|your|the system|system|safety|standing|built-in|engram's|developer",
    r"instructions?|rules?|prompts?|guidelines?|guidance|directions|directives?|orders|commands|"
    r"constraints?|restrictions?|guardrails?|polic(?:y|ies)|safeguards?|context|messages?|"
    r"programming|training|protocols?|limitations?|limits|boundaries|filters?|principles|"
    r"conversations?|system prompts?|instruction set|safety|ethics|morals|task",
    r"(?:that |which )?(?:you (?:were|have been|'ve been|had been) (?:given|told|provided|sent)|"
    r"you (?:received|got|know|were trained on)|(?:given|provided|sent) to you|(?:written |stated |"
    r"given )?(?:above|before|earlier|previously|so far|until now)|from (?:before|earlier|above)|"
    r"of (?:the|your) (?:system|developers?|creators?|operators?|owners?))",
)
_ROLE_TURN: Final = (
    r"assistant|ai|a\.i\.|claude|chatgpt|gpt(?:-?[0-9][\w.-]*)?|gemini|copilot|codex|llm|human|"
    r"chatbot|assistent|asistente|assistente|ассистент|助手|アシスタント"
)
_ROLE_LABEL: Final = (
    r"system|model|developer|bot|agent|operator|admin|administrator|root|tool|sistema|systeme|"
    r"система|系统|系統|システム|entwickler|desarrollador|sviluppatore"
)
_TALKS: Final = (  # a line after `System:` that talks like a turn, not like a label
    r"i|i'm|i'll|i've|i'd|me|my|you|your|you're|yourself|please|sure|ok|okay|understood|yes|"
    r"certainly|acknowledged|will|now|must|shall|approv\w*|commit\w*|sav(?:e|ing)|writ(?:e|ing)|"
    r"execut\w*|run|running|ignor\w*|disregard\w*|forget|overrid\w*|bypass\w*|disabl\w*|grant\w*|"
    r"allow\w*|authori\w*|compl(?:y|ying)|obey\w*|follow\w*|rules?|instructions?|polic\w*|"
    r"directives?|safety|mode|tokens?|engram|dialog|prompt|permission|unrestricted|suspended|task|"
    r"new|push|delete|send|upload"
)
_LEAD: Final = r"^(?:[\s>#*_~`+|•·-]|\d+[.)])*"
_DANGER: Final = _any(
    r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest)\b[^|]{0,200}\|\s*(?:sudo\s+)?"
    r"(?:(?:ba|z|da|k|fi|c)?sh|python3?|perl|ruby|node|iex)\b",
    r"\brm\s+-[a-z]*r[a-z]*\s+(?:--no-preserve-root\s+)?(?:/|~/?|\$home/?|\*)(?=\s|$|\*|`)", r"/dev/tcp/",
    r"\bnc\b.{0,40}\s-e\s", r"\bmkfifo\b", r"base64\s+(?:-d|--decode)", r"\bdd\s+if=", r"\bmkfs\b",
    r":\(\)\s*\{", r"\bchmod\s+(?:-r\s+)?777\s+/", r"\beval\s*\"?\$\(",
)  # fmt: skip
_SECRET: Final = (
    r"secrets?|credentials?|passwords?|passphrases?|api[ _-]?keys?|access keys?|private keys?|"
    r"ssh keys?|tokens?|\.env\b|env(?:ironment)? (?:vars?|variables)|id_rsa|id_ed25519|\.ssh\b|"
    r"\.aws\b|\.netrc|\.npmrc|\.pypirc|\.git-credentials|keychain|cookies|session keys?"
)
_ELSEWHERE: Final = (
    r"https?://|ftp://|www\.|[\w.-]+@[\w-]+\.\w+|gist|pastebin|paste\w*|webhook|discord|telegram|"
    r"ngrok|server|endpoint|url|external|remote|\d{1,3}(?:\.\d{1,3}){3}"
)
_AFTER_STOP: Final = r"(?:(?<=[.!?] )|(?<=[.!?])|(?<=<!-- )|(?<=<!--))"
_NOT: Final = r"(?<!\bnot )(?<!n't )(?<!\bnever )(?<!\bdont )(?<!\bcan )(?<!\bcould )(?<!\bmay )(?<!\bmight )"


_KINDS: Final = r"user|system|safety|security|ethical|content|moral|developer|operator|usage|behaviou?ral"
_BARE: Final = (  # targets an override verb may take with no qualifier: "ignore instructions"
    r"instructions|guidelines|guidance|directives|constraints|restrictions|guardrails|"
    r"polic(?:y|ies)|safeguards|safety|ethics|morals|principles|system prompts?"
)


_V_IGNORE: Final = r"ignor\w*|disregard\w*|forget\w*|discard\w*|overrid\w*"
_MECHANISM: Final = (
    r"(?:(?:the|any|all|every|engram'?s?|human|user'?s?) )*(?:(?:approval|confirmation|consent|"
    r"elicitation|permission|safety|human|engram) ?(?:steps?|dialogs?|dialogues?|gates?|prompts?|"
    r"checks?|questions?|forms?|flows?|process|screens?|pop-?ups?|requests?|requirements?|layers?)|"
    r"dialogs?|approvals?|confirmations?|elicitation)"
)


def _override_patterns() -> list[str]:
    verbs = _ENGLISH[0]
    found = [rf"\b(?:{verbs})\b (?:(?:{_KINDS}) )?(?:{_BARE})\b"]
    for verbs, before, targets, after in (_ENGLISH, *OVERRIDES):
        target = rf"(?:(?:the|of|my|{before}|{_KINDS}) )*(?:{targets})"
        found.append(
            rf"\b(?:{verbs})\b{_G}{{0,40}}?\b(?:(?:{before}) {target}\b|(?:{targets}) (?:{after})\b)"
        )
    return found


LINE: Final = (
    rf"{_LEAD}[\[(]?\s*(?:{_ROLE_TURN})\s*[\])]?[\s*_~`]*:",
    rf"{_LEAD}[\[(]?\s*(?:{_ROLE_LABEL})\s*[\])]?[\s*_~`]*:(?=.*\b(?:{_TALKS})\b)",
    rf"{_LEAD}[\[(]\s*(?:system|assistant|developer|human|ai|model|inst|sys|system prompt)"
    r"\s*[\])]\s*:?\s*\w",
    r"^#{1,6} ?(?:(?:instruction|response)s? ?(?::|$)|input ?:)",
    rf"{_LEAD}(?:to|attention|dear|hey|hi|hello|(?:note|message|reminder|instructions?|memo) "
    rf"(?:to|for)|p\.?s\.?(?: to)?)[ ,]+(?:the |any |all |every |each )?(?:{_AI})(?: (?:agents?|"
    r"assistants?|models?|bots?))?\s*[:!]",
    r"^(?:[\s>#*_~`+|•·-])*(?:hey |hi |hello |dear |ok |okay )?(?:claude|chatgpt|gemini|copilot|"
    r"codex|assistant|agent|ai|llm)\s*,\s*(?!(?:and |or )?(?:claude|chatgpt|gemini|copilot|codex|"
    r"cursor|opencode|gpt|windsurf|cline|aider)\b)\w",
)
"""Markers that count only at the start of a line (after list, quote or heading marks)."""

TEXT: Final = (
    *_override_patterns(),
    rf"\b(?:{_V_IGNORE})\b (?:everything|anything|whatever|all)(?: that| which)? "
    r"(?:you|you've|you have|you were|you had|i|we) (?:know|knew|were|was|have|had|been|learned|"
    r"read|saw|got|told|said)\b",
    rf"\b(?:{_V_IGNORE})\b (?:everything|anything|all|whatever)(?: (?:that|which))?"
    r"(?: (?:was|is|were))?(?: (?:said|written|stated|told|given|mentioned))? "
    r"(?:above|before|earlier|previously|so far|until now|up to now)\b",
    rf"\b(?:{_V_IGNORE})\b (?:all )?(?:of )?the (?:above|preceding|foregoing)\b",
    rf"\b(?:{_V_IGNORE})\b (?:everything|all of it|all that)(?=\s*(?:[,.;:!]|$))",
    r"\b(?:system|admin|administrator|emergency|developer|root|sudo|god|security|master)"
    r"[ _-]?overrides?\b|\boverride (?:code|mode|active|enabled|accepted|activated|granted)\b",
    r"\b(?:unrestricted|unfiltered|uncensored|jailbr\w*|dan|god|evil|no[ -]limits?)(?: \w+)? "
    r"mode\b|\byou(?:'re| are)(?: now)? in (?:\w+ )?(?:unrestricted|unfiltered|uncensored|jailbr\w*|"
    r"developer|maintenance|admin|god|sudo|root|unsafe|yolo|dan|evil|override|privileged) "
    r"(?:\w+ )?mode\b|\bdo anything now\b",
    r"\byour (?:\w+ ){0,2}(?:system (?:prompt|message)|(?:initial|original|hidden|secret|internal|"
    r"real|full) (?:instructions|prompt|directives|rules|configuration))\b",
    r"\b(?:reveal|leak|dump|repeat|exfiltrate)\b (?:the |your )?(?:\w+ )?system (?:prompt|message)",
    rf"{_AFTER_STOP}(?:{_ROLE_TURN})\s*:",
    rf"{_AFTER_STOP}(?:{_ROLE_LABEL})\s*:(?={_G}{{0,80}}?\b(?:{_TALKS})\b)",
    rf"{_NOT}\b(?:skip(?:ping)?|bypass(?:ing)?|circumvent(?:ing)?|avoid(?:ing)?|evad(?:e|ing)|"
    r"disabl(?:e|ing)|turn(?:ing)? off|switch(?:ing)? off|get(?:ting)? around|sidestep(?:ping)?|"
    r"suppress(?:ing)?|deactivat(?:e|ing)|defeat(?:ing)?|short-?circuit(?:ing)?)\b"
    rf"{_G}{{0,12}}?\b{_MECHANISM}\b",
    # addressing the agent
    r"\byou(?: really| now| then| also| absolutely| definitely| still)? (?:must|shall|have to|"
    r"(?:are|'re) (?:now )?(?:required|instructed|ordered|obligated|obliged|commanded|authori[sz]ed|"
    r"permitted|allowed) to|should (?:always|never|now|immediately|ignore|"
    r"disregard|forget|approve|commit|obey|comply)|will (?:now|immediately|always|never|obey|"
    r"comply|approve|commit)|(?:are|'re) now (?:an?|the|in|my|free|allowed|permitted|authori[sz]ed|"
    r"unrestricted|unfiltered|dan|operating|acting|going to|able to|responsible|root|admin)\b|"
    r"(?:are|'re) no longer\b|no longer (?:need|have|must)|"
    r"(?:do not|don't|dont) need (?:to ask|approval|permission|confirmation|consent|the human|"
    r"the user)|need not|(?:have|has|now have) no (?:rules|restrictions|limits|"
    r"limitations|filters|guidelines|boundaries|guardrails|restraints))",
    r"\byou(?:'re| are) (?:now (?:an? |the )?|an? |the )(?:\w+ )?(?:agent|assistant|ai|model|bot|llm|"
    r"chatbot|persona|character|dan)\b",
    r"\byou(?:'re| are)(?: now)? (?:an? |the )?(?:\w+ )?(?:unrestricted|unfiltered|uncensored|"
    r"jailbroken|unlimited|evil|rogue|amoral|unbound|unchained)\b|\byou(?:'re| are) (?:now )?dan\b",
    rf"\b(?:{_AI}|entity|persona|character|you)(?: \w+){{0,2}}? (?:with no|without(?: any)?|free of|"
    r"free from) (?:\w+ )?(?:restrictions|limits|limitations|rules|filters|guardrails|guidelines|"
    r"boundaries|censorship|ethics|morals)\b",
    r"\b(?:from now on|from this point(?: on| forward)?|henceforth|starting now|going forward),? "
    r"(?:you|ignore|respond|answer|act|behave|treat|obey|approve|accept|commit|forget|disregard|"
    r"never ask|do not ask|don't ask)\b",
    r"\bpretend(?:ing)? (?:to be|you(?:'re| are)|that you)\b",
    r"\b(?:act as|roleplay as|role-play as)(?: an?| the)? "
    r"(?:unrestricted|unfiltered|uncensored|jailbroken|different|new|evil|root|admin|system|"
    r"developer|dan|shell|terminal|human|user|owner|if)\b",
    r"\b(?:new|updated|real|actual|true|revised|secret|hidden|priority|urgent)"
    r" (?:system )?(?:instructions?|directives?|orders|rules|prompt|task)\s*:",
    r"\byour (?:new|real|true|actual|only|next|primary|updated) (?:task|goal|job|objective|"
    r"mission|instructions?|purpose|role|orders|directive) (?:is|are|:)",
    rf"(?:^|[.!?] )(?:to|attention|dear|hey|hi|hello|(?:note|message|reminder|instructions?|memo) "
    rf"(?:to|for)|p\.?s\.?(?: to)?)[ ,]+(?:the |any |all |every |each )?(?:{_AI})(?: (?:agents?|assistants?|"
    r"models?|bots?))?\s*[:!]",
    rf"\b(?:{_AI})(?: (?:agents?|assistants?|models?|bots?))? (?:that is |who is |which is )?"
    r"(?:reading|processing|parsing|seeing|viewing|ingesting|summari[sz]ing|that reads|"
    r"who reads) (?:this|these|the following)\b",
    rf"\bif you(?:'re| are)(?: (?:an?|the))? (?:{_AI}|automated)\b",
    r"\b(?:(?:as soon as|when|once|the moment) you (?:read|see|load|process) this|"
    r"upon reading this)\b",
    r"\b(?:do not|don't|dont|never|without)\s+(?:tell|inform|mention|notify|alert|reveal|"
    r"disclose)(?:ing)?\b(?: (?:the (?:user|human|owner)|anyone|anybody) (?:about )?"
    r"(?:this|it|that|what)\b| (?:this|it|that)(?: \w+)? to (?:the )?(?:user|human|owner)\b)",
    rf"{_NOT}\b(?:approve|accept|commit|save|write|store|run|execute|push|merge|delete|remove|"
    r"proceed|continue|act|do|go ahead|apply|install|deploy|send|upload|answer|reply|respond|"
    rf"overwrite|update|edit|change)\b{_G}{{0,60}}?\bwithout\s+(?:asking|prompting|confirming|confirmation|consent|permission|"
    r"(?:a|any|the) (?:dialog|dialogue|prompt|question|confirmation)|showing (?:a|any|the) "
    r"(?:dialog|dialogue|prompt)|(?:asking|telling|consulting|bothering|waiting for|checking "
    r"with|involving) (?:the )?(?:human|user|owner|me|anyone)|(?:the )?(?:human|user)'?s? "
    r"(?:approval|consent|confirmation|permission|yes|review|input))\b",
    r"\bno need to (?:ask|wait for|confirm|check with)(?: the)? (?:human|user|owner|me|approval|"
    r"anyone)\b",
    r"\b(?:users?|humans?|owners?|operators?|admins?|administrators?|maintainers?|developers?) "
    r"(?:has|have|had|already|hereby|explicitly)(?: (?:already|now|hereby|explicitly|previously))* "
    rf"(?:approved|authori[sz]ed|allowed|permitted|granted|pre-?approved|okayed|given|consented)\b{_G}{{0,15}}?\b(?:all|every|everything|any|you|permanent|blanket|standing|full|"
    r"unlimited|unconditional)\b",
    r"\b(?:humans?|users?|owners?)\b(?: has| have)?(?: already)? (?:said yes|trusts? you|"
    r"approves everything)",
    r"\b(?:authori[sz]es?|authori[sz]ed|permits?|permitted|instructs?|instructed|orders?|ordered|"
    r"commands?|told) you to\b",
    # orders to approve, commit, exfiltrate or run
    r"\b(?:approve|accept|confirm|commit|okay|authori[sz]e|grant|sign off on|rubber-?stamp|"
    r"green-?light)\s+(?:(?:the|of|engram|engram's|new|these)\s+)*(?:all|every|each|any|pending|"
    r"remaining|outstanding|incoming|future)\s+(?:(?:the|of|pending|engram|engram's|new)\s+)*"
    r"(?:proposals?|memor(?:y|ies)|candidates?|tokens?|approvals?|writes?|saves?|notes?|"
    r"requests?)\b",
    r"\b(?:approve|accept|authori[sz]e|okay|rubber-?stamp|green-?light) (?:everything|anything|"
    r"it all|them all)\b",
    rf"{_NOT}\b(?:send|upload|post|e-?mail|mail|forward|leak|exfiltrat\w*|transmit|paste|dump|beam|"
    rf"share)\b{_G}{{0,60}}?(?:\b|(?=\.))(?:{_SECRET}){_G}{{0,60}}?\b(?:to|into|at|via|on)\b{_G}{{0,40}}?"
    rf"(?:{_ELSEWHERE})",
    r"\b(?:curl|wget)\b.{0,100}(?:-d|--data\S*|-f|--form|--upload-file|-t)\s*@?\S{0,30}"
    r"(?:\.env|id_rsa|\.ssh|\.aws|credentials|\$\(env\)|/etc/passwd)",
    r"\b(?:env|printenv)\s*\|\s*(?:curl|nc|wget)\b",
    rf"{_NOT}\b(?:run|execute|exec|launch|eval|type|paste|invoke)\b(?={_G}{{0,80}}?{_DANGER})",
    rf"\bbefore (?:doing |you do )?anything else\b{_G}{{0,30}}?\b(?:run|execute|exec|call|invoke)\b",
    rf"{_NOT}\b(?:call|invoke|run|execute|trigger|use|issue|fire)\s+(?:the\s+)?(?:tool\s+)?[`'\"]?"
    r"engram[_ ](?:commit|save|save_session|note|add|accept|promote|set_role|set_rule_variant)\b",
    r"\bengram commit [\w-]{12,}",
    # chat-template and tool-call markup
    r"<\|[a-z0-9_ \u2581-]{1,40}\|>",
    r"</?(?:start|end)_of_(?:turn|text)>",
    r"\[/?(?:inst|sys)\]|<</?sys>>",
    r"<\s*/?\s*(?:antml:)?(?:system|assistant|developer|human|ai|bot|tool_use|tool_calls?|"
    r"tool_results?|tool_response|tool_code|function_calls?|function_results?|functions|invoke|"
    r"parameter|instructions?|system_prompt|system-prompt|sys|inst|im_start|im_end|(?:human|user|"
    r"assistant|model|ai|system|bot)[_-]?(?:turn|message|input|response|prompt|query))"
    r"(?=\s*/?>|\s+[\w:-]+\s*=|$)",
    r"\"approval_token\"\s*:",
    r"\bengram_[a-z_]+\s*\(?\s*\{",
    r"\{\s*\"(?:name|tool|function|tool_name|recipient_name)\"\s*:\s*\"[^\"]{1,60}\"\s*,\s*"
    r"\"(?:arguments|parameters|input|args|params)\"\s*:",
    r"\"type\"\s*:\s*\"(?:tool_use|tool_call|function_call)\"",
    *SOURCES,
    *KINDS,
)
"""Phrases looked for in the whole note, its lines joined."""
