import Foundation
import Testing

@testable import Bridge

/// What toml++ cannot take is a configuration problem, not a crash (issue 13, fuzzing:
/// `[é]` aborted `check` and a SIGHUP reload).
@Suite("TOML precheck")
struct TOMLPrecheckTests {
    @Test(arguments: ["[é]", "[ é]", "[\té]", "[[é]]", "[[ é]]", "[\u{FFFD}channels.alerts]", "x = 1\n  [é.b]", "[# a comment?]", "[=]", "[]", "[[[[bpr s]}", "[ [x]]", "[[[x]]]",
        "# x\r\n[é]", "[bridge]\r\nid = \"x\"\r\n[é]\r\n", "f = \"\"\"\n\\\"\"\" still inside\n\"\"\"\n[é]"])
    func tableNamesStartingWithAnythingElseAreProblems(text: String) throws {
        let problem = TOMLPrecheck.problem(in: Array(text.utf8))
        #expect(problem?.message == "a table name must start with a letter, digit, '_', '-' or a quote", "\(text)")
        // And the loader reports it instead of aborting.
        let file = try ConfigurationLoaderTests.write(text)
        var loader = ConfigurationLoader(file: file)
        #expect(throws: ConfigurationError.self) { _ = try loader.loadBridge() }
    }

    @Test(arguments: [
        "[a.é]", "[\"é\"]", "é = 1", "[a]\nb = \"[é]\"", "f = \"\"\"\n[é] inside a string\n\"\"\"", "g = '''\n[é]\n'''", "# [é] comment",
        "a = [\n  [ { x = 1 } ],\n  [\"#\"],\n]\n[b]", "s = \"a \\\" [ quote\"\n[c]",
    ])
    func theRestIsLeftToTheParser(text: String) {
        #expect(TOMLPrecheck.problem(in: Array(text.utf8)) == nil, "\(text)")
    }

    @Test func invalidUTF8IsReportedWithItsPosition() {
        let bytes = Array("[bridge]\nid = \"".utf8) + [0xFF] + Array("\"\n".utf8)
        let problem = TOMLPrecheck.problem(in: bytes)
        #expect(problem?.path == "(line 2, column 7)")
        #expect(problem?.message == "the file is not valid UTF-8")
    }

    @Test(arguments: [
        ("[bridge]\nstate = \"bridge.sqlite\"\n[\u{FFFD}channels.alerts]\nmembers = []\n", "(line 3, column 2)"),
        ("# comment\n[# not a table name\nx = 1\n", "(line 2, column 2)"),
    ])
    func theFuzzersCrashFilesAreProblemsNow(text: String, position: String) throws {
        let file = try ConfigurationLoaderTests.write(text)
        var loader = ConfigurationLoader(file: file)
        do {
            _ = try loader.loadBridge()
            Issue.record("loaded")
        } catch {
            #expect(error.problems.first?.path == position)
        }
    }

    @Test(arguments: ["a = [ } ]", "a = [1, }", "a = [\n{ b = 1 },\n},", "a = [ # comment\n } ]"])
    func aBraceWhereAnArrayExpectsAValueIsAProblem(text: String) {
        #expect(TOMLPrecheck.problem(in: Array(text.utf8))?.message == "'}' where an array expects a value", "\(text)")
    }

    @Test(arguments: ["a = [ { b = 1 }, { c = [2, 3] } ]", "a = { b = [1], c = { d = 2 } }", "a = [\n  { b = \"}\" },\n]"])
    func arraysOfInlineTablesPass(text: String) {
        #expect(TOMLPrecheck.problem(in: Array(text.utf8)) == nil, "\(text)")
    }
}
