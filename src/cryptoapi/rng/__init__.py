"""Random number generators: the SP 800-90A Rev. 1 DRBGs the kernel's ``crypto/drbg.c``
offers as ``stdrng`` (:mod:`cryptoapi.rng.drbg`), one mechanism per module
(:mod:`~cryptoapi.rng.hash_drbg`, :mod:`~cryptoapi.rng.hmac_drbg`,
:mod:`~cryptoapi.rng.ctr_drbg`), each built on the registry's own hash, HMAC or AES."""
