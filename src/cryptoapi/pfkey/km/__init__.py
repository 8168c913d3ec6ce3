"""The key manager: the sans-I/O core of PF_KEY (:class:`~.manager.KeyManager`: bytes in,
typed results out, the clock injected), the handlers of each message type (:mod:`.handlers`,
:mod:`.spd_handlers`, :mod:`.listeners`, :mod:`.promisc`), what they need of it
(:mod:`.interface`), the checks an SA passes before it is added (:mod:`.admit`) against the
algorithms by SADB number (:mod:`.algorithms`) and the registry's (:mod:`.probe`), the replies
they build (:mod:`.replies`), who receives each message (:mod:`.clients`, :mod:`.routing`),
messages in words (:mod:`.explain`), and the in-process client (:mod:`.local`).

Above :mod:`~cryptoapi.pfkey.db` and :mod:`~cryptoapi.pfkey.wire`, below the daemon and
setkey. Until issue 25 these modules were directly in ``cryptoapi.pfkey``; their old names
still import them (:data:`cryptoapi.pfkey.MOVED`)."""
