"""OpenSSL's libcrypto called from C: ESP's combined modes (priority 310) and its
encrypt-then-MAC, ``authenc(hmac(...),cbc(aes))`` (300), as a CPython extension built on
first use (``esp_batch.c``, :mod:`~cryptoapi.providers.libcrypto.extension`), which also
frames and opens whole runs of ESP packets in one call. OpenSSL, as the ``openssl`` provider
reaches it through ``cryptography``, but the system's build (``-lcrypto``; ``cryptography``
bundles its own, of another version), without Python between one packet and the next.
"""
