"""wolfSSL's wolfCrypt through the ``wolfcrypt`` binding (priority 200): another opinion
for the differential fuzzer, with code of its own (not OpenSSL's, pycryptodome's or
libsodium's).

The binding is built against the system's wolfSSL (Debian's ``libwolfssl-dev``;
``scripts/system-deps`` installs both, the binding with ``USE_LOCAL_WOLFSSL=/usr`` and the
version of the system library). Of this project's names, the binding exposes SHA-1, SHA-2
(but SHA-224) and SHA-3, AES (the block through one-block CBC, CBC, CTR), ChaCha20 and
AES-GCM with a caller's IV. Its HMAC, DES3, ECC and Ed25519 are left out: no provider here
offers one-piece HMACs, and the key agreements would need the private-key-only import the
binding does not expose. Without the binding this provider offers nothing (remembered for
the process, like every optional provider).

The binding converts anything that is not ``bytes`` with ``str(x).encode()`` (a
``memoryview`` would become its repr), so every input is made ``bytes`` here first.
"""
