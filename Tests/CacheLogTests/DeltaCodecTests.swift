import Foundation
import Seeding
import Testing
@testable import CacheLog

/// The delta instructions alone: what the encoder makes always rebuilds its target exactly, and
/// the decoder takes any bytes without trapping, refusing what is not a valid delta.
@Suite("Delta instructions")
struct DeltaCodecTests {
    static func rebuild(_ instructions: [UInt8], base: [UInt8], length: Int) throws(Delta.Damage) -> [UInt8] {
        let result = instructions.withUnsafeBytes { i in
            base.withUnsafeBytes { b in Result { () throws(Delta.Damage) in Array(try Delta.apply(i, to: b, length: length)) } }
        }
        return try result.get()
    }

    static func instructions(_ base: [UInt8], _ target: [UInt8], maxInserted: Int = .max) -> [UInt8]? {
        base.withUnsafeBytes { b in target.withUnsafeBytes { Delta.instructions(from: b, to: $0, maxInserted: maxInserted) } }
    }

    /// Random edits of the kinds a refresh makes: bytes replaced in place, runs inserted,
    /// removed, moved or repeated, at random places, of random bases (text with repeats, and
    /// noise), down to empty ones.
    @Test func instructions_rebuildTheirTargetExactly_overRandomEdits() throws {
        var generator = SeededGenerator(seed: 0xDE17A)
        let alphabet = Array("abcdefghij {}\":,".utf8)
        for round in 0..<400 {
            let size = [0, 1, 15, 16, 17, 40, 300, 5_000][round % 8]
            var base = round % 3 == 0 ? generator.bytes(size) : (0..<size).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            if round % 5 == 0 && size > 0 { base += base } // repeats
            var target = base
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                let at = Int.random(in: 0...target.count, using: &generator)
                let run = Int.random(in: 0...40, using: &generator)
                switch Int.random(in: 0..<5, using: &generator) {
                case 0: target.insert(contentsOf: generator.bytes(run), at: at)
                case 1: target.removeSubrange(at..<min(target.count, at + run))
                case 2: if at < target.count { target[at] ^= 0x5A }
                case 3: let piece = Array(target[at..<min(target.count, at + run)]); target.append(contentsOf: piece)
                default: target.insert(contentsOf: target[0..<min(target.count, run)], at: at)
                }
            }
            let made = try #require(Self.instructions(base, target), "round \(round)")
            #expect(try Self.rebuild(made, base: base, length: target.count) == target, "round \(round)")
            // With a budget, instructions that insert more are never made (the encoder may give
            // up earlier, on a sample or a run not yet covered: it then stores whole).
            let budget = Int.random(in: 0...(target.count + 1), using: &generator)
            if let within = Self.instructions(base, target, maxInserted: budget) {
                #expect(Self.insertedBytes(within) <= budget, "round \(round)")
                #expect(try Self.rebuild(within, base: base, length: target.count) == target, "round \(round)")
            }
            let inserted = Self.insertedBytes(made)
            if inserted > 0 { #expect(Self.instructions(base, target, maxInserted: inserted - 1) == nil, "round \(round)") }
        }
    }

    /// The bytes a delta's insert instructions carry.
    static func insertedBytes(_ instructions: [UInt8]) -> Int {
        var at = 0, total = 0
        func varint() -> Int {
            var value = 0, shift = 0
            while at < instructions.count {
                let byte = instructions[at]
                at += 1
                value |= Int(byte & 0x7F) << shift
                shift += 7
                if byte < 0x80 { break }
            }
            return value
        }
        while at < instructions.count {
            let tag = instructions[at]
            at += 1
            if tag == Delta.copy {
                _ = varint(); _ = varint()
            } else {
                let count = varint()
                total += count
                at += count
            }
        }
        return total
    }

    @Test func aSmallEditOfALargePayload_isAFewCopiesAndTheNewBytes() throws {
        var generator = SeededGenerator(seed: 2)
        var feed = FilmFeed(count: 100, using: &generator)
        let base = Array(feed.payload)
        feed.change(2, using: &generator)
        let target = Array(feed.payload)
        let made = try #require(Self.instructions(base, target))
        #expect(try Self.rebuild(made, base: base, length: target.count) == target)
        #expect(made.count < 2_000, "\(made.count) bytes of instructions for \(target.count)")
        // A payload of the same shape whose items are all new shares too little: refused at once.
        let other = Array(FilmFeed(count: 100, using: &generator).payload)
        #expect(Self.instructions(base, other, maxInserted: other.count / 2) == nil)
    }

    /// Each way instructions can be wrong, by hand: a typed reason, nothing built.
    @Test(arguments: [
        ([UInt8](), 1, "delta makes 0 bytes, payload length says 1"),
        ([1, 0, 4], 3, "delta makes more than the payload length 3"),
        ([1, 0, 0], 0, "delta copy of 0 bytes"),
        ([2, 0], 0, "delta insert of 0 bytes"),
        ([1, 7, 2], 2, "delta copy of 2 bytes at 7 is outside the base's 8 bytes"),
        ([1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1], 1, "delta copy of 1 bytes at 4294967295 is outside the base's 8 bytes"),
        ([1, 0x80, 0x80, 0x80, 0x80, 0x10, 1], 1, "delta copy offset 4294967296 is over 2^32 - 1"),
        ([1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1], 1, "delta copy offset is longer than 5 bytes"),
        ([1, 0x80], 1, "delta instructions end inside a copy offset"),
        ([1, 0], 1, "delta instructions end inside a copy length"),
        ([2, 3, 65], 3, "delta insert of 3 bytes is cut short"),
        ([2], 3, "delta instructions end inside a insert length"),
        ([0, 1, 1], 1, "unknown delta instruction 0"),
        ([2, 1, 65, 1, 0, 8], 8, "delta makes more than the payload length 8"),
    ] as [([UInt8], Int, String)])
    func invalidInstructions_areTypedDamage(instructions: [UInt8], length: Int, detail: String) {
        let base = Array("01234567".utf8)
        #expect(throws: Delta.Damage(detail: detail)) { _ = try Self.rebuild(instructions, base: base, length: length) }
    }

    /// Random bytes as instructions, against random lengths up to 4 GiB: typed damage or exactly
    /// the length asked, never a trap, and nothing allocated for a length they do not make.
    @Test func randomInstructions_neverTrap() {
        var generator = SeededGenerator(seed: 31)
        let base = generator.bytes(300)
        var built = 0
        for _ in 0..<20_000 {
            var instructions = generator.bytes(Int.random(in: 0...24, using: &generator))
            if !instructions.isEmpty { instructions[0] = UInt8.random(in: 0...3, using: &generator) }
            let length = Bool.random(using: &generator) ? Int.random(in: 0...600, using: &generator) : Int(UInt32.max)
            if let rebuilt = try? Self.rebuild(instructions, base: base, length: length) {
                #expect(rebuilt.count == length)
                built += 1
            }
        }
        #expect(built > 0)
    }
}
