"""libsodium's implementations through PyNaCl (priority 200): another independent opinion
for the differential fuzzer, with code of its own (not OpenSSL's, not pycryptodome's).

PyNaCl's low-level ``nacl.bindings`` expose the IETF ChaCha20-Poly1305 and
XChaCha20-Poly1305 AEADs, AES-256-GCM (where the CPU has AES-NI and CLMUL), SHA-256 and
SHA-512 as one-shot functions, and BLAKE2b through ``nacl.hashlib``. They do not expose
libsodium's Poly1305 (``crypto_onetimeauth``), HMAC (``crypto_auth_hmacsha*``) or the bare
ChaCha20 streams, so those names have no libsodium driver here. Without PyNaCl installed
this provider offers nothing (remembered for the process, like every optional provider).
"""
