"""Anti-replay for inbound ESP (RFC 4303 §3.4.3) with extended sequence numbers (Appendix A).

The window is exactly ``size`` packets wide, as Linux's XFRM keeps it: a packet is new if its
sequence number is above the highest seen, or within the ``size`` numbers below it and not
yet seen. The bitmap is one Python int, bit ``i`` standing for ``top - i``; RFC 6479 splits
its bitmap into blocks so that a C implementation shifts words rather than bits, which an
arbitrary-precision int already does (a 4096-packet window is 64 machine words).

Only authenticated packets move the window: :meth:`ReplayWindow.check` comes before the
ICV check and changes nothing, :meth:`ReplayWindow.accept` after it.
"""

ESN_SPACE = 1 << 32


class ReplayWindow:
    """The received-packet window of one inbound SA."""

    __slots__ = ("_mask", "bitmap", "esn", "size", "top")

    def __init__(self, size: int, *, esn: bool) -> None:
        self.size = size
        self.esn = esn
        self.top = 0  # the highest (64-bit, with ESN) sequence number accepted so far
        self.bitmap = 0
        self._mask = (1 << size) - 1

    def full_sequence(self, low: int) -> int:
        """The 64-bit sequence number a packet carrying ``low`` stands for (RFC 4303
        Appendix A2.2); without ESN, ``low`` itself."""
        if not self.esn:
            return low
        width = max(self.size, 1)
        top_low = self.top & (ESN_SPACE - 1)
        top_high = self.top >> 32
        if top_low >= width - 1:  # Case A: the window lies within one 2^32 subspace
            high = top_high if low >= top_low - width + 1 else top_high + 1
        else:  # Case B: the window spans two subspaces
            high = top_high - 1 if low >= (top_low - width + 1) % ESN_SPACE else top_high
        if not 0 <= high < ESN_SPACE:
            return 0  # below the first subspace or past the last: no such packet (refused)
        return high << 32 | low

    def start_at(self, top: int) -> None:
        """Count every number up to ``top`` as received: a window that starts from a
        checkpoint (another data path received up to there, :mod:`cryptoapi.pfkey.daemon.
        checkpoint`), so that none of them is taken again. Never moves the window back."""
        if top > self.top:
            self.top = top
            self.bitmap = self._mask

    def check(self, seq: int) -> bool:
        """Whether ``seq`` (a full sequence number) may be new; changes nothing."""
        if seq == 0:
            return False  # never sent (§3.3.3: the first packet is 1)
        if not self.size or seq > self.top:
            return True
        behind = self.top - seq
        return behind < self.size and not self.bitmap >> behind & 1

    def accept(self, seq: int) -> None:
        """Record ``seq`` as received: call only once its ICV has verified. A jump of the
        window's size or more leaves only ``seq`` in it: the cost is O(window), whatever
        the jump (a shift by the whole jump would cost memory in proportion to it)."""
        if seq > self.top:
            jump = seq - self.top
            kept = self.bitmap << jump if jump < self.size else 0
            self.bitmap = (kept | 1) & self._mask
            self.top = seq
        else:
            self.bitmap |= 1 << (self.top - seq)

    def accept_next(self, count: int) -> None:
        """Record the ``count`` numbers after the highest as received, as ``count`` calls of
        :meth:`accept` in order would: a run of packets that arrived in sequence."""
        kept = self.bitmap << count if count < self.size else 0
        self.bitmap = (kept | ((1 << min(count, self.size)) - 1)) & self._mask
        self.top += count
