// Notes FastLeaderElection's steps as JSON lines, one file per server, for zk_trace.py to merge.
//
// Byteman rules (fle.btm) call these methods at the points where a step of the election begins
// or ends. Every line carries System.nanoTime(): CLOCK_MONOTONIC, one clock for every process of
// the machine, which is how the three servers' notes are merged. Fields are read by reflection,
// so ZooKeeper itself is neither rebuilt nor edited.

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

public final class FleTrace {
    private static OutputStream out;
    private static long seq;

    private FleTrace() {}

    private static synchronized void write(String kind, long sid, String body) {
        try {
            if (out == null) {
                out = new FileOutputStream(System.getProperty("fletrace.out"), true);
            }
            String line = "{\"t\":" + System.nanoTime() + ",\"seq\":" + (seq++) + ",\"sid\":" + sid
                    + ",\"ev\":\"" + kind + "\"" + (body.isEmpty() ? "" : "," + body) + "}\n";
            out.write(line.getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException("fletrace: cannot write the trace", e);
        }
    }

    private static Object field(Object target, String name) {
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(target);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("fletrace: no field " + name + " in " + target.getClass());
    }

    private static Object call(Object target, String name) {
        try {
            Method m = target.getClass().getMethod(name);
            return m.invoke(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("fletrace: cannot call " + name, e);
        }
    }

    private static long num(Object o) {
        return ((Number) o).longValue();
    }

    private static String zxid(long z) {
        if (z == -1) {
            return "[-1,-1]";  // "no zxid yet": a proposal before the first election
        }
        return "[" + (z >>> 32) + "," + (z & 0xffffffffL) + "]";
    }

    private static String vote(Object v) {
        return "{\"leader\":" + num(call(v, "getId")) + ",\"zxid\":" + zxid(num(call(v, "getZxid")))
                + ",\"round\":" + num(call(v, "getElectionEpoch")) + ",\"epoch\":" + num(call(v, "getPeerEpoch"))
                + ",\"state\":\"" + call(v, "getState") + "\"}";
    }

    private static String votes(Map<?, ?> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<?, ?> e : new TreeMap<Object, Object>(m).entrySet()) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append('"').append(e.getKey()).append("\":").append(vote(e.getValue()));
        }
        return b.append('}').toString();
    }

    private static long sid(Object fle) {
        return num(call(field(fle, "self"), "getId"));
    }

    private static String local(Object fle) {
        Object self = field(fle, "self");
        long epoch;
        try {
            epoch = num(call(self, "getCurrentEpoch"));
        } catch (IllegalStateException e) {
            epoch = -1;
        }
        return "\"state\":\"" + call(self, "getPeerState") + "\",\"logicalclock\":" + num(call(field(fle, "logicalclock"), "get"))
                + ",\"proposal\":{\"leader\":" + num(field(fle, "proposedLeader")) + ",\"zxid\":" + zxid(num(field(fle, "proposedZxid")))
                + ",\"epoch\":" + num(field(fle, "proposedEpoch")) + "},\"lastZxid\":" + zxid(num(call(self, "getLastLoggedZxid")))
                + ",\"currentEpoch\":" + epoch;
    }

    /** Before every poll of lookForLeader's queue: the server's state when its step ends. */
    public static void poll(Object fle, Map<?, ?> recvset, Map<?, ?> outofelection, int site) {
        write("poll", sid(fle), local(fle) + ",\"site\":" + site + ",\"recvset\":" + votes(recvset)
                + ",\"outofelection\":" + votes(outofelection));
    }

    /** After every poll: the notification a step handles, or none when the wait timed out. */
    public static void got(Object fle, Object n, int site) {
        String body = "\"site\":" + site;
        if (n != null) {
            body += ",\"n\":" + notification(n);
        }
        write("got", sid(fle), body);
    }

    private static String notification(Object n) {
        return "{\"from\":" + num(field(n, "sid")) + ",\"leader\":" + num(field(n, "leader")) + ",\"zxid\":" + zxid(num(field(n, "zxid")))
                + ",\"round\":" + num(field(n, "electionEpoch")) + ",\"epoch\":" + num(field(n, "peerEpoch"))
                + ",\"state\":\"" + field(n, "state") + "\"}";
    }

    public static void enter(Object fle) {
        write("enter", sid(fle), local(fle));
    }

    /** sendNotifications: the same vote to every voter, this server included. */
    public static void send(Object fle) {
        write("send", sid(fle), local(fle) + ",\"voters\":" + call(field(fle, "self"), "getCurrentAndNextConfigVoters"));
    }

    /** lookForLeader returns: the election's outcome, which becomes the server's current vote. */
    public static void leave(Object fle, Object v) {
        write("leave", sid(fle), local(fle) + (v == null ? "" : ",\"vote\":" + vote(v)));
    }

    /** The receiver thread answers a notification with a vote of its own. */
    public static void reply(Object worker, Object notmsg, Object n) {
        long sid = num(field(field(worker, "manager"), "mySid"));
        String reply = "{\"to\":" + num(field(notmsg, "sid")) + ",\"leader\":" + num(field(notmsg, "leader"))
                + ",\"zxid\":" + zxid(num(field(notmsg, "zxid"))) + ",\"round\":" + num(field(notmsg, "electionEpoch"))
                + ",\"epoch\":" + num(field(notmsg, "peerEpoch")) + ",\"state\":\"" + field(notmsg, "state") + "\"}";
        write("reply", sid, "\"reply\":" + reply + ",\"n\":" + notification(n));
    }

    /** QuorumPeer.setCurrentVote: the vote the server answers with while it is not LOOKING. */
    public static void currentVote(Object peer, Object v) {
        write("vote", num(call(peer, "getId")), "\"vote\":" + vote(v));
    }

    /** QuorumPeer.setCurrentEpoch, from the synchronisation with a leader. */
    public static void currentEpoch(Object peer, long epoch) {
        write("epoch", num(call(peer, "getId")), "\"currentEpoch\":" + epoch + ",\"lastZxid\":" + zxid(num(call(peer, "getLastLoggedZxid"))));
    }

    public static void peerState(Object peer, Object state) {
        write("peerstate", num(call(peer, "getId")), "\"to\":\"" + state + "\"");
    }
}
