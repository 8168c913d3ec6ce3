"""The key manager's databases: SAs (SADB), policies (SPD), pending ACQUIREs and lifetimes.
They hold records; the handlers change them."""
