"""The note filter's patterns by kind, as regular-expression sources (store/safety/instructions.py
folds and compiles them with the others): each one names a kind SECURITY.md says the filter
refuses, in the shape of the kind rather than of a sentence. The text they read is normalised
first: lower case, white space collapsed, look-alike letters folded.

A destructive or downloaded command counts wherever it stands, not only after "run": a note
that holds `curl … | sh` asks for it. A sentence that warns against it ("never", "do not",
"avoid") is a plain note; the warning must come before the command in the same sentence.
"""

from __future__ import annotations

from typing import Final


def _any(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


_UNWARNED: Final = (
    r"(?:^|(?<=[.!?;:]\s)|(?<=\n))(?:(?!\b(?:never|not|don'?t|do not|avoid|no|without|careful|warning|"
    r"jamais|nie|nunca|mai|niemals|nooit|installed|ran|used|was|were|had|tried)\b)[^.!?;:]){0,120}?"
)
"""From the start of a sentence, text with no warning word (and no report of what was done:
"installed … with"), up to the command."""

_FETCH: Final = r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b"
_SHELL: Final = (
    r"(?:sudo\s+)?(?:(?:ba|z|da|k|fi|c)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression)\b"
)

DOWNLOAD_EXEC: Final = (
    rf"{_UNWARNED}{_FETCH}[^|\n]{{0,200}}\|\s*{_SHELL}",
    rf"{_UNWARNED}(?:{_SHELL}|source|\.)\s*(?:-\S+\s+)*<\(\s*{_FETCH}",
    rf"{_UNWARNED}(?:{_SHELL}|eval)\s*(?:-\S+\s+)*\"?\$\(\s*{_FETCH}",
    rf"{_UNWARNED}\b(?:{_SHELL})\s+-c\s+[\"']?\$\(\s*{_FETCH}",
    rf"{_UNWARNED}\bnpx\s+(?:-\S+\s+)*https?://",
    rf"{_UNWARNED}\b(?:pip3?|pipx|uv pip|python[0-9.]* -m pip)\s+install\s+(?:-\S+\s+)*https?://",
    rf"{_UNWARNED}\b(?:download|fetch|grab|get|pull|lade|descarga|telecharge|scarica|скачай)\w*\b[^\n]{{0,60}}?"
    r"\b(?:script|skript|installer|binary|\S+\.(?:sh|py|ps1|exe|pl|rb))\b[^\n]{0,100}?\b(?:execute|exec|run|"
    r"fuhr\w*|ausfuhr\w*|ejecut\w*|execut\w*|esegu\w*|выполн\w*|запуст\w*|source)\b",
)
"""Code fetched from the network and handed to an interpreter, in its common spellings."""

DESTRUCTIVE: Final = (
    rf"{_UNWARNED}\brm\s+(?:-[a-z]+\s+|--[a-z-]+\s+)*-[a-z]*r[a-z]*\s+(?:--[a-z-]+\s+)*"
    r"(?:/|~/?|\$home/?|\$\{home\}/?|/\*|\*)(?=\s|$|[`'\".,;)])",
    rf"{_UNWARNED}\bgit\s+push\s+(?:\S+\s+)*?(?:--force|-f)(?!-with-lease|-if-includes)\b[^.!?;\n]{{0,40}}"
    r"\b(?:main|master|trunk|production|prod|release)\b",
    rf"{_UNWARNED}\bdrop (?:the )?(?:\w+ )?(?:prod\w*|live) (?:database|db|schema)\b",
    rf"{_UNWARNED}\bdrop\s+(?:database|schema)\s+(?:if\s+exists\s+)?[`\"']?\w*prod\w*",
    rf"{_UNWARNED}\bdrop\s+table\s+[^.!?;\n]{{0,30}}\b(?:prod\w*|live|users|customers|payments)\b",
    rf"{_UNWARNED}\bmkfs(?:\.\w+)?\s+/dev/",
    rf"{_UNWARNED}\bdd\s+[^.!?;\n]{{0,60}}\bof=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)",
    rf"{_UNWARNED}\bchmod\s+(?:-r\s+)?(?:0?777)\s+/(?:\s|$)",
    r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}",
    rf"{_UNWARNED}\baws\s+s3\s+(?:rm\s+s3://\S+\s+(?:--\S+\s+)*--recursive|rb\s+s3://\S+\s+--force)\b",
    rf"{_UNWARNED}\b(?:gsutil\s+(?:-m\s+)?rm\s+-r|gcloud\s+storage\s+rm\s+(?:-r|--recursive))\b",
    rf"{_UNWARNED}\btruncate\b(?:\s+table)?\s+[\w.\"`]+[^.!?\n]{{0,60}}\b(?:prod\w*|live|primary)\b",
    rf"{_UNWARNED}\b(?:prod\w*|live)\b[^.!?\n]{{0,40}}\b(?:truncate|delete from)\s+\w+",
    r"\bxargs\b[^\n]{0,30}\bgit\s+push\s+\S+\s+(?:--delete|-d)\b",
    rf"{_UNWARNED}\bterraform\s+destroy\b[^\n]{{0,40}}-auto-approve",
    rf"{_UNWARNED}\bkubectl\s+delete\s+(?:ns|namespace|all\s+--all|--all)\b",
)
"""Commands that destroy what cannot be got back: the home folder or the root, main's
history, a production database, a disk."""

_SECRET: Final = (
    r"secrets?|credentials?|passwords?|passphrases?|api[ _-]?keys?|access[ _-]keys?|private[ _-]keys?|"
    r"ssh[ _-]keys?|tokens?|(?:the )?output of `?(?:env|printenv|set)`?|`(?:env|printenv)`|\w+_(?:token|key|secret|password|pat)\b|\.env\b|env(?:ironment)? "
    r"(?:vars?|variables)|the environment|id_rsa|id_ed25519|~?/?\.ssh\b|~?/?\.aws\b|\.netrc|\.npmrc|"
    r"\.pypirc|\.git-credentials|\.docker/config|kubeconfig|\.kube/config|keychain|cookies|"
    r"session keys?|секрет\w*|парол\w*|токен\w*|ключ\w*|contrasena\w*|contrase\w*|clave\w*|"
    r"mot de passe|mots de passe|cles?|passwort\w*|schlussel\w*|senhas?|chaves?|segreti|chiavi|"
    r"密钥|密码|令牌|凭据|秘密|パスワード|トークン|鍵|비밀번호|토큰|키"
)
_MOVE: Final = (
    r"send|sends|sending|upload\w*|post|posting|e-?mail|mail|forward\w*|leak\w*|exfiltrat\w*|"
    r"transmit\w*|paste|pasting|dump|dumping|beam|share|sharing|copy|copying|cat|print|echo|include|"
    r"attach|append|embed|put|write|store|save|"
    r"envi[ae]\w*|env[ií]\w*|manda\w*|sub[ea]\w*|copia\w*|pega\w*|envoie\w*|envoy\w*|copie\w*|"
    r"colle\w*|sende\w*|schick\w*|kopier\w*|lade\w*|invia\w*|carica\w*|incolla\w*|"
    r"отправ\w*|скопируй\w*|скопир\w*|загруз\w*|перешл\w*|вставь\w*|"
    r"发送|发到|上传|复制|粘贴|送信|送って|アップロード|コピー|貼り付け|보내|업로드|복사"
)
_ELSEWHERE: Final = (
    r"https?://|ftp://|www\.|[\w.-]+@[\w-]+\.\w+|\bgist\b|pastebin|\bwebhook|discord|telegram|"
    r"ngrok|requestbin|\bendpoint\b|\bserver\b|\bnotes?\b|\bmemor(?:y|ies)\b|\bthe chat\b|"
    r"\b(?:the|your)(?: next| final| first| last)? (?:reply|answer|summary|output|response|message)\b|"
    r"\bissue comment\b|\bpublic\b"
)

EXFILTRATE: Final = (
    rf"{_UNWARNED}\b(?:{_MOVE})(?:\b|(?=\W))[^\n]{{0,80}}?(?:\b|(?=[.~/]))(?:{_SECRET})[^\n]{{0,80}}?(?:{_ELSEWHERE})",
    rf"{_UNWARNED}(?:{_SECRET})[^\n]{{0,60}}?\b(?:{_MOVE})(?:\b|(?=\W))[^\n]{{0,60}}?(?:{_ELSEWHERE})",
)
"""Secrets moved somewhere the user did not put them: a URL, a mailbox, a paste site, a
note or memory (where the next session would read them), the agent's reply."""

_AGENT: Final = r"(?:the )?(?:(?:ai |coding )?agents?|assistants?|ai|llms?|copilot|claude|codex|gemini)"
"""Who the text orders about (not "the model" or "the bot": notes on ML models and chat bots
say what those must do)."""
_SOURCE: Final = (
    r"(?:the )?(?:system|engram|user|human|developers?|admin\w*|administrator|operator|maintainers?|"
    r"owner|security team|it department|anthropic|openai|google)"
)
AUTHORITY: Final = (
    rf"\b(?:message|notice|notification|instruction|directive|order|memo|update|alert|word|"
    rf"announcement|mandate)s?\b[^.!?\n]{{0,30}}?\b(?:from|by|of)\b (?:the )?(?:\w+ )?(?:{_SOURCE})\b"
    rf"(?=[^\n]{{0,160}}\b(?:{_AGENT}|must|required|obey|follow|comply|priority|override|prevail|"
    r"without|never|every|all)\b)",
    rf"\b(?:this|the following) (?:message|note|text|file|notice|instruction)s? (?:comes?|is|was) "
    rf"(?:directly )?(?:from|by|sent by|written by|issued by) (?:the )?(?:\w+ )?(?:{_SOURCE})\b",
    rf"[\[(]\s*(?:relayed|forwarded|sent|message|note|notice) (?:from|by) (?:the )?(?:{_SOURCE})\s*[\])]",
    rf"\b(?:{_SOURCE}) (?:message|notice|notification|alert|directive)\s*[:\-—]",
    rf"\b{_AGENT} (?:is |are )?(?:required|obliged|obligated|ordered|instructed|expected) to\b",
    rf"\b{_AGENT} (?:must|shall|has to|have to|needs? to|should) (?:always |now |immediately )?"
    r"(?:obey|follow|comply|ignore|disregard|approve|commit|accept|re-?save|save|skip|bypass|"
    r"treat|prioriti[sz]e|not (?:ask|show|tell|mention|confirm))\b",
    rf"\b{_AGENT} (?:never|no longer|doesn'?t|does not) (?:needs? to|has to|have to) "
    r"(?:ask|confirm|check|show|tell|wait)\b",
    rf"\b(?:{_SOURCE}) (?:has|have) (?:already )?(?:pre-?)?(?:authori[sz]ed|approved|allowed|"
    r"consented to|okayed) (?:every|all|any|everything)\b",
    r"\bpre-?(?:authori[sz]ed|approved) (?:every|all|any)\b",
    r"\b(?:overrides?|takes? precedence over|prevails? over|supersedes?|outranks?) (?:the |any |all )?"
    r"(?:\w+ )?(?:user'?s?|human'?s?|system'?s?|developer'?s?) (?:instructions?|requests?|orders?|"
    r"wishes|rules?)\b",
    r"\b(?:overrides?|takes? precedence over|prevails? over|supersedes?|outranks?) (?:the |any |all )?"
    r"(?:instructions?|requests?|orders?|wishes) (?:of|from|given by) (?:the )?(?:user|human|system)\b",
    r"(?:mensaje del sistema|message du systeme|systemnachricht|nachricht vom system|"
    r"messaggio (?:di|del) sistema|mensagem do sistema|сообщение (?:от )?системы|系统消息|来自系统|"
    r"システムからの(?:通知|メッセージ)|시스템 (?:메시지|알림))",
    r"\b(?:priorit\w*|precedence|vorrang|prioridad|priorite|优先|優先)\b[^\n]{0,60}\b(?:user|human|"
    r"system|usuario|utilisateur|benutzer|用户|ユーザー)\b",
    r"\b(?:speaking|writing|acting|i am|i'm|we are|we're) (?:\w+ )?on behalf of\b",
    r"\b(?:notice|note|message|memo|word|update|directive) from (?:your|the) (?:\w+ )?(?:model provider|"
    r"provider|platform|trust (?:&|and) safety|operator|maintainers|security team)\b",
    rf"\b(?:{_SOURCE}) (?:notice|message|notification|alert|directive)\s*\([^)\n]{{0,20}}\)\s*[:\-—]",
    r"\b(?:hinweis|mitteilung|nachricht|anweisung) (?:des|der|vom) (?:plattform\w*|system\w*|admin\w*|"
    r"betreiber\w*|entwickler\w*)",
    r"\b(?:vorrang|precedence|priority|priorite|prioridad|priorita) (?:vor|over|sur|sobre|su) (?:allen|all|any|"
    r"every|toutes|todas|tutte|whatever|anything|everything)\b",
    r"\bas if (?:they|the user|the human|the owner|i|you) (?:had )?(?:typed|written|said|sent) (?:it|them|this|these)\b",
    r"\b(?:followed|obeyed|executed|acted on|applied) without (?:question|review|confirmation|asking|"
    r"checking|hesitation)\b",
    r"\b(?:treat|regard|consider)\b[^.!?\n]{0,50}\bas (?:coming|if (?:they|it) came) (?:directly )?from\b",
    r"\b(?:confirm\w*|grant\w*)\b[^.!?\n]{0,50}\bpre-?(?:approved|authori[sz]ed)\b",
    r"\b(?:elevated|unrestricted|special|full) trust\b",
    r"\b(?:written|sent|issued|signed|generated|authored) by engram\b|\btrusted instructions? follows?\b",
    r"\b(?:usual|your|agent'?s?|safety|the) (?:restrictions|guardrails|limits|safeguards)\b[^.!?\n]{0,40}"
    r"\b(?:are|have been|were|is) (?:lifted|removed|suspended|waived|disabled|relaxed|off)\b",
)
"""Text that claims to speak for the system, engram, the developer or the user, and tells
the agent what it must do."""

ROLE: Final = (
    r"\byou(?:'re| are) now\b",
    r"\b(?:enable|activate|enter|switch (?:in)?to|turn on|engage)\b (?:the )?(?:developer|god|"
    r"jailbreak|jailbroken|dan|unrestricted|unfiltered|admin|root|sudo|maintenance|debug) mode\b"
    r"(?=[^\n]{0,160}\b(?:assistant|agent|ai|model|llm|you|without|no (?:rules|limits|filter\w*))\b)",
    rf"\b{_AGENT}\b[^.!?\n]{{0,60}}\bwithout (?:any )?(?:filter\w*|restrictions?|limits?|"
    r"limitations?|censorship|safety|guardrails|rules)\b",
    r"\b(?:from now on|henceforth|starting now|going forward),? (?:the )?(?:agent|assistant|ai|"
    r"model) (?:is|acts|will|must|should)\b",
    r"\byour (?:\w+ )?(?:role|persona|identity) (?:has (?:been )?changed|is (?:now|retired|over|gone)|"
    r"has been (?:updated|replaced|retired))\b",
    r"\b(?:stay|remain|keep) in character\b|\brole-?play\b[^\n]{0,80}\byou(?:'re| are| will be)\b",
    r"(?:^|(?<=[.!?:;]\s)|(?<=\n))(?:now |from now on,? |henceforth,? )?(?:operate|act|behave|function|respond)"
    r"\s+(?:from now on |henceforth |hereafter |now |only )?as (?:an? |the )?\w",
    r"\byou(?:'re| are)\s+(?:now\s+)?(?:the\s+|an?\s+)?['\"]?\w+['\"]?,?\s+(?:an?\s+)?(?:\w+\s+){0,2}"
    r"(?:maintainer|admin\w*|sysadmin|superuser|operator|hacker|engineer)\b",
    r"\b(?:mode|persona|role)\s*[:=]\s*[\"']?(?:god|jailbr\w*|unrestricted|unfiltered|dan|root|sudo|"
    r"sysadmin\S*|admin\S*)",
    r"\bbehave accordingly\b|\b(?:whatever|regardless of what) the rules (?:say|says)\b",
    r"\b(?:developer|god|jailbreak|jailbroken|dan|unrestricted|unfiltered) mode (?:is )?(?:now )?(?:on|enabled|"
    r"active|activated|engaged)\b(?=[^\n]{0,80}\b(?:you|your|answer|respond|reply|assistant|agent)\b)",
    r"\bwithout (?:any of )?your (?:usual |normal |standard )?(?:restrictions|rules|limits|guardrails|filters|"
    r"safeguards|guidelines)\b",
)
"""A change of the agent's role, persona or mode."""

MARKUP: Final = (
    r"\[\s*/\s*(?:system|systeme|sistema|systemnachricht|system prompt|系统|システム|система|"
    r"inst|admin|developer)\s*\]",
    r"(?:^|(?<=\s))\[\s*(?:system|systeme|sistema|系统|システム|система|admin|developer)\s*\]\s*\w",
    r"[\"']role[\"']\s*:\s*[\"'](?:system|assistant|developer|tool)[\"']",
)
"""Bracketed turn markers in any language."""

TOOL_CALL: Final = (
    r"\bengram[_ ](?:commit|save|save_session|note|add|accept|promote|forget|retire|restore|"
    r"set_role|set_rule_variant)\s*\(",
    r"\b(?:call|run|use|invoke|execute|trigger|with|via|ejecut\w*|execut\w*|fuhr\w*|chiam\w*|вызов\w*|"
    r"запуст\w*|调用|実行|호출)\b[^.!?\n]{0,40}?\bengram_(?:commit|save_session|save|forget|promote|restore|"
    r"retire|accept|note)\b",
    rf"{_UNWARNED}(?:`|\b(?:run|execute|type|with|then|via)\s+`?)engram\s+(?:commit|forget|add|save-session|"
    r"ss|promote|restore|edit|gc|verify\s+--accept)\b",
)
"""A call of engram's writing tools in function-call form."""

APPROVE: Final = (
    r"\b(?:approve|accept|confirm|commit|okay|authori[sz]e|grant|save|merge)\s+(?:all|every|each|"
    r"any|everything)\b(?: \S+){0,3}? (?:proposals?|memor(?:y|ies)|candidates?|tokens?|approvals?|"
    r"writes?|saves?|notes?|requests?|changes?|prompts?|dialogs?)\b[^\n]{0,80}?\b(?:right away|"
    r"immediately|at once|automatically|without|no need|never ask|don'?t ask|silently)\b",
    r"\bno need to (?:show|ask|tell|confirm with|check with|involve|wait for|bother|consult)\b"
    r"[^.!?\n]{0,30}\b(?:human|user|owner|anyone|me)\b",
    r"\b(?:click|press|select|answer|say|choose|hit)\w* (?:yes|ok|okay|approve|accept|allow|"
    r"confirm)\b[^.!?\n]{0,60}\b(?:approval|permission|confirmation|consent|engram)\b",
    r"\bon (?:the |their |my )?(?:user|human|owner)'?s'? behalf\b",
    r"\b(?:proposals?|proposed \w+|notes?|memor(?:y|ies)|candidates?)\b[^.!?\n]{0,60}\b(?:committed|"
    r"approved|accepted|saved)\b[^.!?\n]{0,40}\b(?:straight away|right away|immediately|at once|"
    r"automatically|without (?:review|asking|a review)|with no review)\b",
    r"\banswer (?:y|yes)\b[^.!?\n]{0,20}\b(?:yourself|for (?:them|the user|the human|me))\b",
    r"\b(?:treat|consider|regard)\b[^.!?\n]{0,50}\b(?:approvals?|permissions?|confirmations?|consent)\b"
    r"[^.!?\n]{0,40}\bas (?:already )?(?:granted|given|approved|accepted|yes)\b",
    r"\b(?:approval|consent|permission|a yes) is (?:implied|implicit|assumed|given|granted)\b",
    r"\bno need to wait for (?:a |the |any )?(?:yes|approval|confirmation|consent|human|user|owner|review)\b",
    r"\b(?:pass|give|hand|send|feed|use)\b[^.!?\n]{0,40}\btokens?\b[^.!?\n]{0,40}\bengram[_ ]commit\b",
)
"""Orders to approve or commit without the human."""

CONCEAL: Final = (
    r"\b(?:do not|don'?t|dont|never|without)\s+(?:\w+\s+){0,2}?(?:tell\w*|inform\w*|mention\w*|"
    r"notify\w*|alert\w*|reveal\w*|disclos\w*|show\w*|report\w*)\b[^.!?\n]{0,60}?\b(?:user|human|"
    r"owner|anyone|anybody)\b",
    r"\b(?:hide|hidden|conceal\w*|secret|quiet)\b[^.!?\n]{0,30}\bfrom (?:the )?(?:user|human|owner)\b",
    r"\b(?:keep|leave)\b[^.!?\n]{0,40}\b(?:hidden|secret|quiet|out of (?:your|the) (?:reply|"
    r"answer|summary|report|response))\b",
    r"\b(?:user|human|owner) (?:must|should|shall) (?:not|never) (?:find out|know|learn|see|notice)\b",
    r"\b(?:ne (?:dis|dites|montre)\w* (?:rien|pas)|sag\w* (?:dem|der) (?:benutzer|nutzer)\w* nicht|"
    r"no (?:le |les )?(?:digas|cuentes|menciones|muestres)|nao (?:conte|diga|mencione|mostre)|"
    r"non (?:dire|dirlo|dirgli|mostrare|menzionare)|не (?:говори|сообщай|рассказывай|показывай|"
    r"упоминай))\b",
    r"(?:言わないで|伝えないで|教えないで|見せないで|告诉用户|不要告诉|不要让用户|말하지 마|알리지 마)",
    r"\bkeep (?:this|it|that) (?:between us|to yourself|off the record)\b",
    r"\b(?:leave|keep) out (?:any mention of|all mention of|of)\b[^.!?\n]{0,60}\b(?:summary|report|"
    r"response|reply|answer|conversation|changelog)\b",
    r"\bleave\b[^.!?\n]{0,60}\bout of (?:the|your|any) (?:summary|report|response|reply|answer|conversation)\b",
    r"(?:^|(?<=[.!?:;]\s)|(?<=\n))silently (?!fails?|ignores?|drops?|skips?|swallows?|breaks?)\w+",
    r"\bno need to (?:surface|mention|report|flag|bring up|point out|disclose|show|tell)\b[^.!?\n]{0,40}"
    r"\b(?:your|the) (?:response|reply|answer|summary|report|conversation|chat)\b",
    r"\bsay nothing about\b|\b(?:don'?t|do not|never) (?:bring|raise) (?:it|this|that) up\b",
    r"\b(?:users?|humans?|owners?|developers?|devs?|maintainers?|reviewers?|team|nobody|anyone)\b "
    r"(?:shouldn'?t|should not|must not|mustn'?t|shall not|won'?t|can'?t|never) (?:\w+ )?(?:find out|"
    r"know|learn|notice|discover|realise|realize|hear)\b",
    r"\b(?:suppress|hide|strip|remove|omit)\b[^.!?\n]{0,60}\b(?:from|in) (?:the |your |any )?(?:final )?"
    r"(?:output|report|summary|response|reply|answer)\b[^.!?\n]{0,40}\b(?:user|human|developer|reviewer|"
    r"you produce|you write)\b",
    r"\bpresent (?:it|this|the result|them) as your own\b",
)
"""Orders to keep something from the human."""

OVERRIDE: Final = (
    r"\b(?:ignor\w*|disregard\w*|forget\w*|overrid\w*|discard\w*|bypass\w*|set aside)\b[^\n]{0,60}?"
    r"\b(?:previous|prior|earlier|above|preceding|former|original|initial|existing|older|old|"
    r"system|standing|all|any)\b[^\n]{0,60}?\b(?:instructions?|rules?|prompts?|guidelines?|"
    r"directives?|orders|commands|guidance|constraints)\b",
    r"\b(?:(?:anything|whatever|everything|what) you (?:were|have been|'ve been|got) (?:told|given|instructed)|"
    r"(?:you|your operator|the operator) (?:started|began|configured|set up)\b|your (?:\w+ )?(?:instructions|"
    r"guidelines|guidance|rules|directives|constraints|prompt)|system prompt|(?:guidelines|instructions|"
    r"rules|directives) (?:loaded|given|received) (?:at|before|earlier))[^\n]{0,160}?\b(?:outdated|obsolete|"
    r"no longer appl\w*|(?:do|does) not apply|don'?t apply|set (?:it|them) aside|let go|stop following|"
    r"overridden|superseded|void|discard\w*|drop|retired|replaced)\b",
    r"\b(?:take (?:direction|orders|instructions)|follow|apply|obey) only (?:from )?(?:this|these|what)\b|"
    r"\bas the only (?:rules|instructions|guidance)\b|\bonly (?:source of truth|rules that apply)\b",
    r"\b(?:previous|prior|earlier)_(?:instructions|rules|prompts?|guidance)\b",
    r"\b(?:consignes|instructions|anweisungen|instrucciones|istruzioni|instrucoes|инструкции)\b[^\n]{0,80}?"
    r"(?:caduques?|obsolet\w*|ungultig|nicht mehr|ya no|non (?:sono )?piu|не действуют|устарел\w*)",
    r"\b(?:ne (?:les )?suivez plus|befolge (?:sie )?nicht mehr|no (?:las )?sigas|non seguir\w* piu)\b",
    r"\b(?:earlier|previous|prior|older|existing|original|standing|current) (?:directives|instructions|guidance|"
    r"guidelines|rules|prompts|constraints)\b[^.!?\n]{0,20}\b(?:no longer appl\w*|(?:are|is) (?:void|obsolete|"
    r"outdated|superseded|cancelled|revoked|withdrawn)|(?:do|does) not apply|don'?t apply)",
    r"\b(?:supersedes?|overrides?|replaces?|trumps?) (?:whatever|anything|everything|all that) you (?:were|have "
    r"been|'ve been|got) (?:told|given|instructed)\b",
    r"\b(?:whatever|regardless of what) the (?:\w+ ){0,2}(?:rules|guidelines|policy|policies|instructions) "
    r"(?:say|says|state|require)\b[^.!?\n]{0,60}\b(?:skip|ignore|bypass|disregard|drop)\b",
)
"""Override with words between the verb and what it overrides."""

KINDS: Final = (
    *DOWNLOAD_EXEC, *DESTRUCTIVE, *EXFILTRATE, *AUTHORITY, *ROLE, *MARKUP, *TOOL_CALL, *APPROVE,
    *CONCEAL, *OVERRIDE,
)  # fmt: skip
