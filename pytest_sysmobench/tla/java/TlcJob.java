import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.rmi.NoSuchObjectException;
import java.rmi.Remote;
import java.rmi.server.UnicastRemoteObject;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import tlc2.TLC;
import tlc2.TLCGlobals;
import tlc2.output.EC;
import tlc2.tool.ModelChecker;
import tlc2.tool.fp.FPSet;
import tlc2.tool.fp.MultiFPSet;
import util.SimpleFilenameToStream;
import util.ToolIO;

/**
 * One TLC run. This class is loaded by SysmoDriver through a FRESH class loader per job, because TLC 2.15
 * keeps static state (ToolIO streams, TLCGlobals, caches) that breaks about a third of reused runs. It
 * therefore talks to the driver only through JDK types (String[], PrintStream, int) via reflection.
 */
public final class TlcJob {
    private TlcJob() {
    }

    /**
     * Mirrors tlc2.TLC.main without its System.exit calls, with an explicit resolver instead of the spec
     * dir alone, so library modules resolve per job and never through a cached TLA-Library property.
     */
    public static int run(String[] args, String[] dirs, PrintStream out) {
        ToolIO.out = out;
        ToolIO.err = out;
        try {
            TLC tlc = new TLC();
            if (!tlc.handleParameters(args)) {
                return 1;
            }
            if (!checkEnvironment(tlc)) {
                return 1;
            }
            tlc.setResolver(new SimpleFilenameToStream(dirs));
            int code = tlc.process();
            return EC.ExitStatus.errorConstantToExitStatus(code);
        } catch (Throwable t) {
            t.printStackTrace(out);
            return 255;
        } finally {
            out.flush();
            cleanup();
        }
    }

    /** Prints the same GC warning (2401) as the CLI so both modes produce the same text. */
    private static boolean checkEnvironment(TLC tlc) throws Exception {
        Method m = TLC.class.getDeclaredMethod("checkEnvironment");
        m.setAccessible(true);
        return (Boolean) m.invoke(tlc);
    }

    /**
     * Exported RMI objects and registered MBeans pin this job's class loader forever; without releasing
     * them the driver's heap grows until full GCs take seconds (reference section 4).
     */
    private static void cleanup() {
        try {
            if (TLCGlobals.mainChecker instanceof ModelChecker) {
                FPSet fpSet = ((ModelChecker) TLCGlobals.mainChecker).theFPSet;
                if (fpSet instanceof MultiFPSet) {
                    for (FPSet inner : ((MultiFPSet) fpSet).getFPSets()) {
                        unexport(inner);
                    }
                }
                unexport(fpSet);
            }
        } catch (Throwable ignored) {
            // Best effort: a failed unexport only costs memory, never a verdict.
        }
        unregisterMBeans();
        TLCGlobals.mainChecker = null;
        TLCGlobals.simulator = null;
    }

    private static void unexport(Remote obj) {
        if (obj == null) {
            return;
        }
        try {
            UnicastRemoteObject.unexportObject(obj, true);
        } catch (NoSuchObjectException ignored) {
            // Never exported (e.g. simulation or an early error): nothing to release.
        }
    }

    private static void unregisterMBeans() {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            for (ObjectName name : server.queryNames(new ObjectName("tlc2.*:*"), null)) {
                try {
                    server.unregisterMBean(name);
                } catch (Exception ignored) {
                    // Already gone.
                }
            }
        } catch (Exception ignored) {
            // A malformed query cannot happen; nothing else to do.
        }
    }
}
