import Foundation
import Testing
import TestSupport

@testable import Bridge
@testable import BridgeCommand

/// A password file other users can read is reported by `check` and logged at start
/// (issue 13, defect 11).
@Suite("Password source exposure")
struct PasswordSourceTests {
    @Test(arguments: [(0o600, false), (0o400, false), (0o640, true), (0o644, true), (0o606, true)] as [(Int, Bool)])
    func groupOrOtherAccessIsReported(mode: Int, exposed: Bool) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("password")
        try "pw\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(chmod(path, mode_t(mode)) == 0)
        let warning = PasswordSource.file(path).exposure()
        #expect((warning != nil) == exposed, "mode \(String(mode, radix: 8)): \(warning ?? "-")")
        if let warning {
            #expect(warning.contains(path) && warning.contains(String(mode, radix: 8)))
            #expect(!warning.contains("pw\n"))
        }
    }

    @Test func checkListsTheExposedAccount() throws {
        let file = try ConfigurationLoaderTests.write(
            """
            [accounts.work]
            jid = "work@example.test"
            password_file = "work.password"
            [accounts.home]
            jid = "home@example.test"
            password_env = "HOME_PASSWORD"
            """,
            files: ["work.password": "pw\n"]
        )
        let directory = (file as NSString).deletingLastPathComponent
        #expect(chmod("\(directory)/work.password", 0o644) == 0)
        var loader = ConfigurationLoader(file: file)
        let warnings = CheckCommand.warnings(try loader.loadBridge())
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("accounts.work: password file") == true)
    }
}
