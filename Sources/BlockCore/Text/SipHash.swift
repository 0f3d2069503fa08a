/// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudorandom function of 64 bits. With
/// a secret key, its outputs for 1, 2, 3, ... cannot be told from random ones, nor the next
/// one guessed from those seen; blockd names more-time requests with it (A1: ids are not
/// guessable). Pure: the key is given.
public struct SipHash24: Sendable {
    public let k0: UInt64
    public let k1: UInt64

    public init(k0: UInt64, k1: UInt64) { (self.k0, self.k1) = (k0, k1) }

    /// The 64-bit tag of `message`.
    public func hash(_ message: some Collection<UInt8>) -> UInt64 {
        var v0: UInt64 = 0x736f6d6570736575 ^ k0
        var v1: UInt64 = 0x646f72616e646f6d ^ k1
        var v2: UInt64 = 0x6c7967656e657261 ^ k0
        var v3: UInt64 = 0x7465646279746573 ^ k1
        func round() {
            v0 &+= v1; v1 = v1.rotl(13); v1 ^= v0; v0 = v0.rotl(32)
            v2 &+= v3; v3 = v3.rotl(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotl(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotl(17); v1 ^= v2; v2 = v2.rotl(32)
        }
        func compress(_ m: UInt64) {
            v3 ^= m
            round(); round()
            v0 ^= m
        }
        var word: UInt64 = 0, filled = 0
        for byte in message {
            word |= UInt64(byte) << (8 * UInt64(filled))
            filled += 1
            if filled == 8 { compress(word); (word, filled) = (0, 0) }
        }
        compress(word | UInt64(message.count & 0xff) << 56)
        v2 ^= 0xff
        round(); round(); round(); round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    fileprivate func rotl(_ n: UInt64) -> UInt64 { (self << n) | (self >> (64 - n)) }
}
