/// How a test server is started (``ProsodyServer``, ``EjabberdServer``): up to five
/// attempts, each on fresh free ports when the ports are ours to choose (another process
/// may take a port between choosing and binding), stopping what a failed attempt left.
/// On a restart (same ports, same data) one attempt only.
package enum ServerLaunch {
    package static func retrying(
        server: String, pickPorts: Bool, choosePorts: () throws -> Void, start: () throws -> Void, stop: () -> Void
    ) throws {
        var lastError: (any Error)?
        for _ in 0..<5 {
            if pickPorts { try choosePorts() }
            do {
                try start()
                return
            } catch {
                lastError = error
                stop()
                guard pickPorts else { break }
            }
        }
        throw lastError ?? Subprocess.Failure(command: server, status: 1, output: "did not start")
    }
}
