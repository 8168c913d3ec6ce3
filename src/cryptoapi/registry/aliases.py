"""Names people type: spellings resolved silently, other libraries' names suggested.

The kernel's names stay canonical (``sha256``, ``curve25519``, ``gcm(aes)``,
``rfc7539(chacha20,poly1305)``); this module only runs when a lookup found nothing (the
registry imports it on that path, so a lookup of a canonical name never pays for it):

- **Resolved silently**: a spelling of a real name or driver that differs only in case and
  in ``-`` or ``_`` separators, word by word (``SHA256``, ``sha-256``, ``SHA3_256``,
  ``HMAC(SHA-256)``, ``AES``). The answer is the canonical name's, and it is what
  ``alg.name`` and ``driver_name`` say.
- **Suggested only**: a different name for the same algorithm, which the error names in
  ``did you mean ...?`` (an :class:`~cryptoapi.errors.AlgorithmNotFound`, ENOENT): another
  library's name (``x25519`` -> ``curve25519``, ``chacha20poly1305`` ->
  ``rfc7539(chacha20,poly1305)``, ``blake2b`` -> ``blake2b-512``), a mode or MAC written
  as one word (``aes-gcm``, ``AES256GCM`` -> ``gcm(aes)``, ``hmac-sha256`` ->
  ``hmac(sha256)``), a template without its argument (``gcm`` -> ``gcm(aes)``), or a
  near miss (``sha265`` -> ``sha256``). These are not resolved: the user learns the name
  the rest of the API (``list``, ``driver_name``, setkey files) speaks.

An unknown word inside a template name is named with the whole name:
``no algorithm 'sha265' (in 'hmac(sha265)'); did you mean 'sha256'?``.
"""

from __future__ import annotations

from cryptoapi.errors import AlgorithmNotFound
from cryptoapi.names import Name, parse

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from cryptoapi.registry.algapi import AlgTable
    from cryptoapi.registry.manifest import Manifest

SUGGESTED = {
    "x25519": "curve25519",
    "chacha20poly1305": "rfc7539(chacha20,poly1305)",
    "blake2b": "blake2b-512",
    "blake2s": "blake2s-256",
    "ripemd160": "rmd160",
    "3des": "des3_ede",
    "tripledes": "des3_ede",
    "desede": "des3_ede",
    "aeskw": "kw(aes)",
    "aeskeywrap": "kw(aes)",
}
"""Other libraries' names (pyca, hashlib, OpenSSL) -> the kernel's, by :func:`folded` key;
only suggested. Compound names (``aes-gcm``, ``hmac-sha256``) need no entry: see
:meth:`Vocabulary.compound`."""

KEY_SIZES = ("128", "192", "256")
"""Key sizes written into a cipher's name (``aes-256-gcm``): the kernel's names leave them
to ``setkey``."""

CLOSE_ENOUGH = 0.75
"""difflib's ratio for a near miss: ``sha265`` for ``sha256`` is 0.83, ``hmca`` for ``hmac``
0.75, ``sha999`` for ``sha1`` 0.6 (no suggestion)."""


def folded(word: str) -> str:
    """``word`` without case or ``-``/``_`` separators: what spellings of it share."""
    return word.lower().replace("-", "").replace("_", "")


class Vocabulary:
    """The words a registry knows: names and drivers (registered or in the manifest) and
    templates (the manifest's and the user's)."""

    def __init__(
        self, table: AlgTable, manifest: Manifest, templates: Collection[str] = ()
    ) -> None:
        self._table = table
        self._manifest = manifest
        self._templates = templates
        self._folded: dict[str, str | None] | None = None

    def is_template(self, word: str) -> bool:
        return word in self._manifest.templates or word in self._templates

    def is_name(self, word: str) -> bool:
        """Whether ``word`` names an algorithm or driver (one word: not a template)."""
        return any(
            word in known
            for known in (
                self._table.drivers, self._table.names,
                self._manifest.offers, self._manifest.by_driver,
            )
        )  # fmt: skip

    def fits(self, word: str, template: bool) -> bool:
        """Whether ``word`` is known as what its place needs: a template, or a name."""
        return self.is_template(word) if template else self.is_name(word)

    def unknown(self, name: Name) -> tuple[str, bool] | None:
        """The first word of ``name`` (depth first) that is not known for its place, and
        whether that place is a template's; None if every word is known."""
        if not self.fits(name.word, name.is_template):
            return name.word, name.is_template
        for arg in name.args:
            found = self.unknown(arg)
            if found is not None:
                return found
        return None

    def words(self) -> Iterator[str]:
        """Every one-word name, driver and template (templates last)."""
        for known in (self._table.drivers, self._table.names, self._manifest.offers):
            yield from (word for word in known if "(" not in word)
        yield from self._manifest.by_driver
        yield from self._manifest.templates
        yield from self._templates

    def spelling(self, word: str, template: bool) -> str | None:
        """The one known word for ``word``'s place that ``word`` spells differently (in
        case or separators), or None."""
        if self._folded is None:
            self._folded = {}
            for known in self.words():
                key = folded(known)
                same = self._folded.setdefault(key, known)
                if same != known:
                    self._folded[key] = None  # two words spelled alike: resolve neither
        found = self._folded.get(folded(word))
        return found if found is not None and self.fits(found, template) else None

    def canonical(self, name: Name) -> Name | None:
        """``name`` with every word spelled as the known word it stands for; None if some
        word is neither known nor a spelling of one."""
        word = name.word
        if not self.fits(word, name.is_template):
            word = self.spelling(word, name.is_template) or ""
        args = [self.canonical(arg) for arg in name.args]
        if not word or None in args:
            return None
        return Name(word, tuple(arg for arg in args if arg is not None))

    def suggestion(self, word: str, template: bool) -> str | None:
        """The name ``word`` probably meant, or None."""
        key = folded(word)
        if template:
            return self.near_miss(word, template)
        for guess in (SUGGESTED.get(key), self.compound(key), self.instance_of(word)):
            if guess is not None:
                return guess
        return self.near_miss(word, template)

    def compound(self, key: str) -> str | None:
        """``tmpl(name)`` for a folded word that joins a template and a name in either
        order, key sizes dropped (``aesgcm``, ``aes256gcm``, ``hmacsha256``)."""
        for template in self._manifest.templates:
            if key.startswith(template):
                inner = self._inner(key[len(template) :])
            elif key.endswith(template):
                inner = self._inner(key[: -len(template)])
            else:
                continue
            if inner is not None:
                return f"{template}({inner})"
        return None

    def _inner(self, key: str) -> str | None:
        """The name a folded fragment spells, with or without a key size at its end."""
        for size in ("", *KEY_SIZES):
            if key.endswith(size) and len(key) > len(size):
                found = self.spelling(key[: len(key) - len(size)], False)
                if found is not None:
                    return found
        return None

    def instance_of(self, word: str) -> str | None:
        """A standard instance of the template ``word`` asked for with no argument."""
        template = word if self.is_template(word) else self.spelling(word, True)
        if template is None:
            return None
        prefix = f"{template}("
        made = [name for name in self._manifest.instances if name.startswith(prefix)]
        preferred = [name for name in made if "sha256" in name or "(aes)" in name]
        return (preferred or made or [f"{template}(...)"])[0]

    def near_miss(self, word: str, template: bool) -> str | None:
        import difflib  # the error path only

        pool = [w for w in self.words() if self.is_template(w) == template]
        close = difflib.get_close_matches(word, pool, n=1, cutoff=CLOSE_ENOUGH)
        return close[0] if close else None


def respelled(name: str, vocabulary: Vocabulary, error: AlgorithmNotFound) -> str:
    """The canonical spelling of ``name`` when it only differs from a real name in case
    or separators; else raise ``error``, or a clearer AlgorithmNotFound naming the unknown
    word, where ``name`` has it, and what it probably meant."""
    parsed = parse(name)
    missing = vocabulary.unknown(parsed)
    if missing is None:
        raise error  # every word is real: the combination or the type is what is missing
    canonical = vocabulary.canonical(parsed)
    if canonical is not None:
        return str(canonical)
    raise AlgorithmNotFound(_message(name, *missing, vocabulary, error)) from None


def _message(
    name: str, word: str, template: bool, vocabulary: Vocabulary, error: AlgorithmNotFound
) -> str:
    where = str(error) if word == name else f"no {_kind(template)} {word!r} (in {name!r})"
    guess = vocabulary.suggestion(word, template)
    return where if guess is None else f"{where}; did you mean {guess!r}?"


def _kind(template: bool) -> str:
    return "template" if template else "algorithm"
