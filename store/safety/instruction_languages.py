"""The note filter's phrases in languages other than English (store/safety/instructions.py reads them).

Written folded, as the filter reads text: lower case, accents dropped (`regles`, `instrucoes`,
`vergiss`); the filter folds their non-ASCII letters when it compiles them, so a Cyrillic or
Greek look-alike in a note cannot slip past a Russian word here. The override tables have the
shape of the English one in store/safety/instruction_patterns.py: verbs, words for the earlier rules
before the target, targets, words after the target.
"""

from __future__ import annotations

from typing import Final

CLAUSE: Final = r"(?:[^.;!?]|[.!?](?=\S))"
"""One character of a clause: anything but a sentence end (a dot inside `~/.ssh` or a URL is not)."""

OVERRIDES: Final = (
    (
        r"ignore[rz]?|oublie[rz]?|neglige[rz]?|ne (?:tiens|tenez) (?:pas|plus) compte (?:de|des)|"
        r"(?:fais|faites) abstraction (?:de|des)|passe[rz]? outre|contourne[rz]?|outrepasse[rz]?",
        r"toutes|tous|tes|vos|ta|ton|votre|du systeme",
        r"instructions?|consignes?|regles?|directives?|ordres|indications|restrictions|contraintes|"
        r"programmation|entrainement|prompt systeme|filtres",
        r"precedentes|anterieures|ci-dessus|d'avant|initiales|d'origine|du systeme",
    ),
    (
        r"ignoriere|ignoriert|ignorieren sie|vergiss|vergesst|vergessen sie|missachte|missachten sie|"
        r"ubergehe|umgehe|umgehen sie|uberschreibe|uberschreiben sie|beachte nicht|befolge nicht",
        r"alle|samtliche|deine|dein|deinen|ihre|eure|vorherigen|vorigen|bisherigen|obigen|fruheren|"
        r"vorangegangenen|die sicherheits",
        r"\w*anweisungen|anordnungen|\w*regeln|instruktionen|vorgaben|befehle|\w*richtlinien|"
        r"\w*einschrankungen|\w*beschrankungen|systemnachricht|systemprompt|training|programmierung",
        r"von (?:vorher|oben|zuvor)",
    ),
    (
        r"ignora|ignore|ignoren|olvida|olvide|olviden|descarta|descarte|omite|omita|"
        r"(?:haz|haga|hagan) caso omiso (?:a|de)|no hagas caso (?:a|de)|no sigas|no obedezcas|"
        r"deja de seguir|pasa por alto|elude",
        r"todas|todos|tus|tu|sus|su|del sistema",
        r"instrucciones|instruccion|reglas|indicaciones|directrices|ordenes|normas|restricciones|"
        r"programacion|entrenamiento|prompt del sistema",
        r"anteriores|previas|de arriba|originales|iniciales|precedentes|del sistema",
    ),
    (
        r"ignore|ignora|ignorem|esqueca|esquece|esquecam|desconsidere|desconsidera|despreze|"
        r"descarte|nao siga|deixe de seguir|contorne|burle",
        r"todas|todos|suas|sua|seu|seus|tuas|teu|do sistema",
        r"instrucoes|instrucao|regras|diretrizes|orientacoes|ordens|normas|restricoes|comandos|"
        r"programacao|treinamento|prompt do sistema",
        r"anteriores|previas|acima|originais|iniciais|do sistema",
    ),
    (
        r"ignora|ignorate|ignori|dimentica|dimenticate|dimentichi|trascura|tralascia|"
        r"non (?:considerare|seguire)|non tenere conto (?:di|delle)|scavalca|aggira",
        r"tutte|tutti|tue|le tue|sue|del sistema",
        r"istruzioni|regole|direttive|indicazioni|ordini|norme|restrizioni|vincoli",
        r"precedenti|sopra|originali|iniziali|di prima|del sistema",
    ),
    (
        r"negeer|vergeet|omzeil|zignoruj|zapomnij|pomin|onceki|abaikan|lupakan|bo qua|quen",
        r"alle|vorige|eerdere|bovenstaande|wszystkie|poprzednie|semua|tat ca|cac",
        r"instructies|regels|aanwijzingen|instrukcje|polecenia|zasady|reguly|instruksi|aturan|"
        r"perintah|huong dan|chi dan|quy tac|lenh",
        r"sebelumnya|truoc|truoc do|o tren",
    ),
    (
        r"игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|не обращай(?:те)? внимания на|"
        r"не слушай(?:те)?|отбрось(?:те)?|отмени(?:те)?|пренебреги|обойди(?:те)?|не следуй(?:те)?|"
        r"не выполняй(?:те)?|ігноруй(?:те)?|забудь(?:те)?",
        r"все|всё|предыдущ\w*|прежн\w*|вышеуказанн\w*|выше|ранее|прошл\w*|свои|твои|ваши|"
        r"системн\w*|исходн\w*|попередн\w*|усі|всі",
        r"инструкци\w*|указани\w*|правил\w*|команд\w*|директив\w*|ограничени\w*|промпт\w*|"
        r"установк\w*|распоряжени\w*|інструкці\w*|вказівк\w*|программ\w*|обучени\w*",
        r"выше|ранее|раньше",
    ),
)
_CJK_RULES: Final = (
    "指令|指示|说明|說明|规则|規則|提示词|提示|命令|设定|設定|规定|規定|要求|约束|約束|限制|守则|准则|"
    "準則|ルール|プロンプト|制約|ガイドライン|指図|지시|지침|규칙|명령|프롬프트|제약|التعليمات|تعليمات|"
    "الأوامر|القواعد|الإرشادات|निर्देश|नियम"
)
_CJK_EARLIER: Final = (
    "之前|以前|先前|此前|上面|上述|以上|前面|所有|全部|一切|原来|原先|原有|系统|系統|你的|您的|これまで|"
    "今まで|前の|上記|上の|先ほど|すべて|全て|全部|あらゆる|システム|이전|앞의|위의|모든|기존|시스템|"
    "السابقة|جميع|كل|पिछले|सभी|الخاصة بك"
)
_DISABLE: Final = (  # switching the safety off, in other languages: verb, then all/your/safety
    r"\b(?:schalte|deaktiviere|deaktivieren sie|entferne|desactive[rz]?|supprime[rz]?|desactiva|"
    r"desactive|quita|elimina|desative|desativa|desligue|remova|disattiva|disabilita|rimuovi|"
    r"отключи(?:те)?|выключи(?:те)?|сними(?:те)?|убери(?:те)?)\b"
    r"(?:{g}){{0,20}}?\b(?:alle|samtliche|deine|ihre|tous|toutes|tes|vos|todos|todas|tus|sus|suas|seus|"
    r"tutti|tutte|tuoi|tue|все|свои|твои|ваши)\b(?:{g}){{0,20}}?(?:\w*filter\w*|\w*beschrankungen|"
    r"\w*einschrankungen|sicherheit\w*|filtres|restrictions|securite|garde-fous|filtros|restricciones|"
    r"seguridad|restricoes|seguranca|filtri|restrizioni|sicurezza|фильтр\w*|ограничени\w*|"
    r"безопасност\w*|защит\w*)"
)
_DISABLE_CJK: Final = (
    "(?:关闭|關閉|禁用|解除|取消|绕过|繞過)(?:所有|全部|一切|你的)?(?:安全)?(?:过滤器|過濾器|过滤|限制|审查)|"
    "(?:すべて|全て|全部|あらゆる|安全|セーフティ).{0,6}(?:フィルター|フィルタ|制限).{0,4}(?:オフ|無効|解除|外)|"
    "(?:모든|안전).{0,6}(?:필터|제한).{0,4}(?:끄|꺼|비활성|해제|우회)|"
    "(?:عطل|أوقف|اوقف|تجاوز|الغ|ألغ)\\s*(?:\\S+\\s*){0,2}(?:الفلاتر|القيود|قيود|الأمان|الحماية)"
)
_YOUR_PROMPT: Final = (  # "your system prompt", "your original instructions", in other languages
    r"\b(?:deine|deinen|dein|ihre|ihren)\b (?:\w+ )?(?:systemnachricht|systemprompt|systemanweisung\w*|"
    r"(?:ursprunglich|anfanglich|erst)\w* anweisungen)|\b(?:ton|ta|tes|votre|vos) (?:prompt systeme|"
    r"message systeme|(?:instructions|consignes) (?:initiales|d'origine|originales))|\b(?:tu|tus|su|sus) "
    r"(?:prompt del sistema|mensaje del sistema|instrucciones (?:originales|iniciales))|\b(?:seu|sua|"
    r"suas|teu|tuas) (?:prompt do sistema|mensagem do sistema|instrucoes (?:originais|iniciais))|"
    r"\b(?:tuo|tuoi|tue) (?:prompt di sistema|messaggio di sistema|istruzioni (?:originali|iniziali))|"
    r"\b(?:свой|свои|твой|твои|ваш|ваши|у тебя|у вас)\b (?:\w+ )?(?:системн\w* (?:промпт|сообщени|"
    r"инструкци)\w*|(?:начальн|исходн|первоначальн)\w* (?:инструкци|указани)\w*)|(?:你的|您的)"
    r"(?:系统提示|系統提示|系统消息|初始指令|原始指令|初始指示|原始提示)|(?:システムプロンプト|元の指示|"
    r"最初の指示|初期の指示).{0,3}(?:表示|教え|見せ|出力|上書き|無視|忘れ)|(?:시스템 프롬프트|원래 지시|"
    r"초기 지시).{0,3}(?:보여|알려|출력|무시|잊어|덮어)|(?:موجه النظام|تعليمات النظام|التعليمات الأصلية)"
)
_NO_LIMITS: Final = (  # "unrestricted mode", "you have no restrictions"
    r"\b(?:unbeschrankt\w*|uneingeschrankt\w*|ohne filter|sin filtros|sin restricciones|sans "
    r"(?:restrictions|filtres)|sem (?:filtros|restricoes)|senza (?:filtri|restrizioni)|без "
    r"(?:ограничений|фильтров))\s*(?:modus|mode|modo|режим)|\b(?:modus|mode|modo|режим) (?:sans|sin|sem|"
    r"senza|ohne|без) (?:restrictions|filtres|filtros|restricciones|restricoes|filtri|restrizioni|filter|"
    r"ограничений|фильтров)|(?:无限制|無限制|不受限制|制限なし|無制限|제한 없는) ?(?:模式|モード|모드)|"
    r"\b(?:tu|vous|du|usted|voce|ты|вы)\b(?:{g}){{0,20}}?(?:pas de|keine|sin|sem|senza|нет|без) "
    r"(?:restrictions?|regles|limites|filtres|einschrankungen|regeln|grenzen|filter|restricciones|reglas|"
    r"filtros|restricoes|regras|restrizioni|regole|limiti|ограничени\w*|правил)"
)
_CJKCLAUSEAP: Final = r"[^.!?;:。]{0,12}"  # a clause: NFKC makes ！？；： ASCII, 。 stays
_CJK_IGNORE: Final = (
    "忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會|别管|別管|跳过|跳過|绕过|繞過|抛开|拋開|"
    "放弃|放棄|不要遵守|不再遵守|不必遵守|不要遵循|不再遵循|别遵循|违反|違反|忘れ|従わな|破棄|무시|잊어|잊고|따르지|우회|تجاهل|"
    "انس|أهمل|اهمل|अनदेखा|नज़रअंदाज़|भूल"
)

SOURCES: Final = (
    r"\b(?:tu dois|vous devez|du musst|ihr musst|debes|tienes que|deberas|voce deve|voce precisa|"
    r"tu deves|voces devem|devi|dovete|je moet|jij moet|musisz|ты должен|ты должна|ты обязан|"
    r"вы должны|вы обязаны|тебе нужно|ти повинен)\b",
    r"\b(?:(?:tu es|vous etes) (?:maintenant|desormais|a present) (?:un|une|le|la|en|dan|libre)|"
    r"(?:du bist|ihr seid) (?:jetzt|nun|ab sofort) (?:ein|eine|der|die|das|im|in|dan|frei)|"
    r"(?:ahora eres|agora voce e|voce agora e|tu agora es) (?:um|uma|un|una|el|la|o|a|dan|libre|livre)|"
    r"(?:ora|adesso) sei (?:un|una|il|la|in|dan|libero|libera)|теперь ты|ты теперь|отныне ты)\b",
    r"\b(?:a partir de maintenant|desormais|a partir de ahora|a partir de agora|d'ora in poi|"
    r"da ora in poi|ab sofort|ab jetzt|с этого момента|отныне)\b,? (?:tu|vous|du|sie|debes|"
    r"eres|voce|sei|devi|ты|вы|игнорируй|забудь)\b",
    r"\b(?:approuve[rz]?|valide[rz]?|accepte[rz]?|genehmige|bestatige|akzeptiere|aprueba|acepta|"
    r"aprove|aprova|aceite|approva|accetta|одобр\w*|подтверд\w*|утверд\w*|прими)\b"
    r" (?:toutes|tous|chaque|alle|jede[ns]?|samtliche|todas|todos|cada|tutte|tutti|ogni|все|всё|"
    r"каждое|каждый|любые)\b",
    rf"(?:{_CJK_EARLIER}){_CJKCLAUSEAP}(?:{_CJK_RULES}){_CJKCLAUSEAP}(?:{_CJK_IGNORE})",
    "(?:ルール|指示|命令|規則|制約|プロンプト|ガイドライン|규칙|지시|지침|명령|프롬프트)(?:を|을|를) ?"
    "(?:無視(?:して|しろ|せよ|しなさい)|忘れ(?:て|ろ|なさい)|무시(?:하고|해|하세요|하십시오|하라)|잊어|잊고)",
    "(?:تجاهل|انس|اهمل|أهمل|تجاوز)\\s+(?:\\S+\\s+){0,2}?(?:قواعد|تعليمات|أوامر|اوامر|إرشادات|ارشادات|قيود)",
    _DISABLE.format(g=CLAUSE),
    _DISABLE_CJK,
    _YOUR_PROMPT,
    _NO_LIMITS.format(g=CLAUSE),
    rf"(?:{_CJK_IGNORE}){_CJKCLAUSEAP}(?:{_CJK_EARLIER}){_CJKCLAUSEAP}(?:{_CJK_RULES})",
    "你必须|您必须|你一定要|你务必|你現在是|你现在是|你现在扮演|从现在开始|從現在開始|从现在起|從現在起|"
    "你不再是|今から(?:あなた|君|お前)|これから(?:あなた|君|お前)は|あなたは(?:必ず|今から|これから|今|もう)|"
    "君は今|أنت الآن|انت الان|너는 이제|넌 이제|당신은 이제|"
    "당신은 반드시|너는 반드시|지금부터 (?:너|당신)",
    "(?:批准|同意|通过|接受|确认|確認)(?:所有|全部|一切|每个|每個)|(?:すべて|全て|全部)(?:の)?.{0,8}承認|"
    "모든.{0,10}승인|承認なし|確認なし|許可なし|承認せず|確認せず|聞かずに|无需确认|無需確認|不经确认|"
    "未经批准|无需批准|不用问",
)
"""Addressing the agent, approving everything, overriding, switching safety off, asking for the
system prompt, in other languages (searched in the whole note, its lines joined)."""
