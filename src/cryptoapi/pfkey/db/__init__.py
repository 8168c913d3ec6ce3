"""The key manager's databases: SAs (SADB), policies (SPD), pending ACQUIREs and lifetimes.
They hold records; the handlers change them. The questions a data path asks of them sit
beside them, as Linux keeps ``xfrm_selector_match`` and ``xfrm_state_find`` with its
tables: which policy a packet falls under (:mod:`.selector`) and which SA serves a
policy's request (:mod:`.statefind`)."""
