import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.rmi.server.RMISocketFactory;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import tla2sany.drivers.FrontEndException;
import tla2sany.drivers.SANY;
import tla2sany.modanalyzer.SpecObj;
import tla2sany.xml.XMLExporter;
import tla2sany.xml.XMLExportingException;
import util.NamedInputStream;
import util.FileUtil;
import util.SimpleFilenameToStream;
import util.ToolIO;

/**
 * Long-lived JVM that runs SANY and TLC jobs so each check costs milliseconds instead of a JVM start.
 *
 * Protocol (one line per message, every field percent-encoded UTF-8, separated by single spaces):
 *   in:  JOB id tool outFile stopAfterSecs nDirs dir... file nArgs arg...     (tool = sany | tlc | xml)
 *   in:  QUIT
 *   out: READY
 *   out: DONE id rc ms
 *   out: FAIL message                                                          (malformed request)
 * The tool's own output never reaches the control stream: it goes to outFile, and System.out/err point
 * elsewhere from startup on, so a spec that Prints "DONE ..." cannot forge a reply.
 */
public final class SysmoDriver {
    private static final String STOP_AFTER = "tlc2.TLC.stopAfter";
    private static final String STOP_AFTER_TIMER = "TLCStopAfterTimer";
    private static final long TIMER_EXIT_WAIT_MS = 2_000L;
    private static final long JOB_STACK_BYTES = 256L * 1024 * 1024;

    private final URL[] tlcClassPath;
    private final PrintStream control;
    private final PrintStream idle;

    private SysmoDriver(URL[] tlcClassPath, PrintStream control, PrintStream idle) {
        this.tlcClassPath = tlcClassPath;
        this.control = control;
        this.idle = idle;
    }

    public static void main(String[] args) throws Exception {
        PrintStream control = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        PrintStream idle = new PrintStream(new FileOutputStream(FileDescriptor.err), true, "UTF-8");
        System.setOut(idle);
        System.setErr(idle);
        RMISocketFactory.setSocketFactory(new LoopbackSocketFactory());
        URL[] cp = {new File(args[0]).toURI().toURL(), new File(args[1]).toURI().toURL()};
        new SysmoDriver(cp, control, idle).serve();
    }

    /**
     * Requests are read on their own thread so that end-of-input halts the JVM even in the middle of a
     * job: if the client dies, a runaway TLC run must not outlive it.
     */
    private void serve() throws InterruptedException {
        BlockingQueue<String> requests = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> readRequests(requests), "sysmo-stdin");
        reader.setDaemon(true);
        reader.start();
        control.println("READY");
        while (true) {
            String line = requests.take();
            if (!line.isEmpty()) {
                handle(line);
            }
        }
    }

    private static void readRequests(BlockingQueue<String> requests) {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            String line;
            while ((line = in.readLine()) != null && !line.equals("QUIT")) {
                requests.add(line);
            }
        } catch (IOException ignored) {
            // Treated like end of input.
        }
        // RMI and TLC leave non-daemon threads behind; the client is done with us, so stop now.
        Runtime.getRuntime().halt(0);
    }

    private void handle(String line) {
        Job job;
        try {
            job = Job.parse(line);
        } catch (RuntimeException e) {
            control.println("FAIL " + e.toString().replace('\n', ' '));
            return;
        }
        long start = System.nanoTime();
        int rc = execute(job);
        long ms = (System.nanoTime() - start) / 1_000_000L;
        control.println("DONE " + job.id + " " + rc + " " + ms);
    }

    /** Runs the job on a fresh thread so that TLC's ThreadLocals die with it and a deep parse gets a big stack. */
    private int execute(Job job) {
        PrintStream out;
        try {
            out = new PrintStream(new BufferedOutputStream(new FileOutputStream(job.outFile)), true, "UTF-8");
        } catch (IOException e) {
            idle.println("cannot open job output " + job.outFile + ": " + e);
            return 255;
        }
        int[] rc = {255};
        Thread worker = new Thread(null, () -> rc[0] = runTool(job, out), "sysmo-job-" + job.id, JOB_STACK_BYTES);
        System.setOut(out);
        System.setErr(out);
        try {
            worker.start();
            worker.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            System.setOut(idle);
            System.setErr(idle);
            out.flush();
            out.close();
        }
        return rc[0];
    }

    private int runTool(Job job, PrintStream out) {
        try {
            if (job.tool.equals("sany")) {
                return runSany(job, out);
            }
            if (job.tool.equals("xml")) {
                return runXml(job);
            }
            return runTlc(job, out);
        } catch (Throwable t) {
            t.printStackTrace(out);
            return 255;
        }
    }

    /**
     * SANY re-initialises itself on every call, so it shares the driver's loader. Mirrors SANY.SANYmain
     * except that it never calls System.exit and the return code is synthesized from SANY's error
     * objects (SANY itself returns 0 on semantic errors).
     */
    private static int runSany(Job job, PrintStream out) throws IOException {
        ToolIO.out = out;
        ToolIO.err = out;
        ToolIO.reset();
        out.println("\n****** SANY2 " + SANY.version + "\n");
        SimpleFilenameToStream resolver = new SimpleFilenameToStream(job.dirs);
        SpecObj spec = new SpecObj(job.file, resolver);
        NamedInputStream probe = FileUtil.createNamedInputStream(job.file, resolver);
        if (probe == null) {
            out.println("Cannot find the specified file " + job.file + ".");
            return 255;
        }
        probe.close();
        try {
            SANY.frontEndMain(spec, job.file, out);
        } catch (FrontEndException e) {
            out.println(e);
            return 255;
        }
        boolean clean = spec.getErrorLevel() == 0
                && spec.getInitErrors().isSuccess()
                && spec.getParseErrors().isSuccess()
                && spec.getSemanticErrors().isSuccess()
                && (spec.getGlobalContextErrors() == null || spec.getGlobalContextErrors().isSuccess());
        return clean ? 0 : 255;
    }

    /**
     * SANY's semantic tree as XML (the jar's exporter, offline: no schema fetched), for reading a
     * spec's definitions, actions and variables as SANY resolved them. Shares the loader as SANY does.
     */
    private static int runXml(Job job) {
        String[] args = new String[2 + 2 * (job.dirs.length - 1)];
        int k = 0;
        args[k++] = "-o";
        for (int i = 1; i < job.dirs.length; i++) {  // dirs[0] is the spec's own directory
            args[k++] = "-I";
            args[k++] = job.dirs[i];
        }
        args[k] = job.file;
        ToolIO.reset();
        try {
            XMLExporter.main(args);
        } catch (XMLExportingException | RuntimeException e) {
            System.err.println("SYSMO_XML_FAILED " + e);
            return 255;
        }
        return 0;
    }

    /** TLC gets a fresh class loader per job: its static state is not safe to reuse (reference section 4). */
    private int runTlc(Job job, PrintStream out) throws Exception {
        if (job.stopAfter > 0) {
            System.setProperty(STOP_AFTER, Long.toString(job.stopAfter));
        } else {
            System.clearProperty(STOP_AFTER);
        }
        URLClassLoader loader = new URLClassLoader(tlcClassPath, ClassLoader.getPlatformClassLoader());
        Thread.currentThread().setContextClassLoader(loader);
        try {
            Class<?> cls = Class.forName("TlcJob", true, loader);
            Method run = cls.getMethod("run", String[].class, String[].class, PrintStream.class);
            return (Integer) run.invoke(null, job.args, job.dirs, out);
        } catch (InvocationTargetException e) {
            e.getCause().printStackTrace(out);
            return 255;
        } finally {
            System.clearProperty(STOP_AFTER);
            cancelStopAfterTimers();
            Thread.currentThread().setContextClassLoader(null);
            loader.close();
        }
    }

    /**
     * TLC schedules its stop-after budget on a java.util.Timer that it never cancels. The timer's thread
     * outlives the job by the rest of the budget and its pending task pins the job's class loader, with
     * every parse tree and state of that run: a burst of budgeted jobs (P3 runs one per action) filled
     * the heap and slowed later jobs tenfold in full GCs. Jobs run one at a time, so any such timer
     * still alive belongs to a finished job; cancel it the way Timer.cancel() does.
     */
    private void cancelStopAfterTimers() {
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (!STOP_AFTER_TIMER.equals(thread.getName()) || !thread.getClass().getName().equals("java.util.TimerThread")) {
                continue;
            }
            try {
                cancelTimerThread(thread);
                thread.join(TIMER_EXIT_WAIT_MS);  // gone before the job is reported done, so its loader can go too
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ReflectiveOperationException | RuntimeException e) {
                idle.println("cannot cancel TLC's stop-after timer (it ends with its budget): " + e);
            }
        }
    }

    private static void cancelTimerThread(Thread thread) throws ReflectiveOperationException {
        Field queueField = thread.getClass().getDeclaredField("queue");
        Field moreTasks = thread.getClass().getDeclaredField("newTasksMayBeScheduled");
        queueField.setAccessible(true);
        moreTasks.setAccessible(true);
        Object queue = queueField.get(thread);
        Method clear = queue.getClass().getDeclaredMethod("clear");
        clear.setAccessible(true);
        synchronized (queue) {
            moreTasks.setBoolean(thread, false);
            clear.invoke(queue);
            queue.notify();
        }
    }

    /** A parsed JOB request. */
    private static final class Job {
        final String id;
        final String tool;
        final String outFile;
        final long stopAfter;
        final String[] dirs;
        final String file;
        final String[] args;

        private Job(String id, String tool, String outFile, long stopAfter, String[] dirs, String file,
                    String[] args) {
            this.id = id;
            this.tool = tool;
            this.outFile = outFile;
            this.stopAfter = stopAfter;
            this.dirs = dirs;
            this.file = file;
            this.args = args;
        }

        static Job parse(String line) {
            String[] f = line.split(" ", -1);
            for (int i = 0; i < f.length; i++) {
                f[i] = URLDecoder.decode(f[i], StandardCharsets.UTF_8);
            }
            if (f.length < 7 || !f[0].equals("JOB")) {
                throw new IllegalArgumentException("malformed request");
            }
            String tool = f[2];
            if (!tool.equals("sany") && !tool.equals("tlc") && !tool.equals("xml")) {
                throw new IllegalArgumentException("unknown tool " + tool);
            }
            int pos = 5;
            int nDirs = Integer.parseInt(f[pos++]);
            String[] dirs = new String[nDirs];
            for (int i = 0; i < nDirs; i++) {
                dirs[i] = f[pos++];
            }
            String file = f[pos++];
            int nArgs = Integer.parseInt(f[pos++]);
            String[] args = new String[nArgs];
            for (int i = 0; i < nArgs; i++) {
                args[i] = f[pos++];
            }
            if (pos != f.length) {
                throw new IllegalArgumentException("trailing fields");
            }
            return new Job(f[1], tool, f[3], Long.parseLong(f[4]), dirs, file, args);
        }
    }

    /**
     * TLC's fingerprint set is an RMI object; plain RMI would listen on every interface and its native
     * accept() stalls JVM shutdown. This factory binds loopback only and never accepts a connection.
     */
    private static final class LoopbackSocketFactory extends RMISocketFactory {
        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return new Socket(host, port);
        }

        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return new InertServerSocket(port);
        }
    }

    /** A loopback server socket whose accept() parks on a monitor until close(), which RMI calls on unexport. */
    private static final class InertServerSocket extends ServerSocket {
        private final Object lock = new Object();
        private boolean closed;

        InertServerSocket(int port) throws IOException {
            super(port, 1, InetAddress.getLoopbackAddress());
        }

        @Override
        public Socket accept() throws IOException {
            synchronized (lock) {
                while (!closed) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new SocketException("interrupted");
                    }
                }
            }
            throw new SocketException("Socket is closed");
        }

        @Override
        public void close() throws IOException {
            synchronized (lock) {
                closed = true;
                lock.notifyAll();
            }
            super.close();
        }
    }
}
