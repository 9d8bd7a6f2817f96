import Testing
@Test func placeholder_reliability() { #expect(Bool(true)) }
