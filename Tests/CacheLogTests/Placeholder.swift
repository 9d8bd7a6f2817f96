import Testing
@Test func placeholder_CacheLogTests() { #expect(Bool(true)) }
