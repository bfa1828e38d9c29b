#!/usr/bin/env python3
# ab-cpu.py: server CPU per operation of two folio binaries, measured side by
# side (docs/benchmarks.md, issue 16). Starts a fresh `folio serve` of each,
# loads both alike, then runs the workload on one and the other in turn, in
# short runs (DUR, default 2s), ROUNDS times, and sums each server's CPU (from
# /proc) and operations: the drift of a shared machine falls on both. Write
# workloads are noisier: one server's compactions run during the other's turn.
#
# usage: scripts/ab-cpu.py WORKLOAD "BIN_A [ENV=value...]" "BIN_B [ENV=value...]" [DOCS] [ROUNDS]
# (Linux; python3's standard library only.)
import json,subprocess,sys,os,random,tempfile,time,urllib.request,shutil
w=sys.argv[1]; specs=[sys.argv[2],sys.argv[3]]; docs=sys.argv[4] if len(sys.argv)>4 else "50000"
rounds=int(sys.argv[5]) if len(sys.argv)>5 else 10; dur=os.environ.get("DUR","2s")
def cpu(pid):
    f=open(f"/proc/{pid}/stat").read().rsplit(")",1)[1].split()
    return (int(f[11])+int(f[12]))/os.sysconf("SC_CLK_TCK")
srvs=[]
try:
    for spec in specs:
        parts=spec.split(); binp=parts[0]; env=dict(os.environ); env.update(dict(p.split("=",1) for p in parts[1:]))
        port=18000+random.randrange(2000); d=tempfile.mkdtemp(prefix="folio-ab-")
        p=subprocess.Popen([binp,"serve","--addr",f"127.0.0.1:{port}","--data-dir",d,"--log-level","warn"],env=env,stdout=open(d+".log","w"),stderr=subprocess.STDOUT)
        srvs.append((f"{len(srvs)}:{spec}",binp,f"http://127.0.0.1:{port}",p,d))
        for i in range(100):
            try: urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health"); break
            except Exception: time.sleep(0.2)
    for spec,binp,url,p,d in srvs:
        subprocess.run([binp,"bench","--url",url,"--docs",docs,"--workload","A","--duration","3s","--quiet"],stdout=subprocess.DEVNULL,check=True)
    tot={s[0]:[0,0.0,0.0] for s in srvs}
    for r in range(rounds):
        order=srvs if r%2==0 else srvs[::-1]
        for spec,binp,url,p,d in order:
            c0=cpu(p.pid)
            out=subprocess.run([binp,"bench","--url",url,"--docs",docs,"--load=false","--warmup","0","--workload",w,"--duration",dur,"--quiet","--json"],capture_output=True,text=True,check=True).stdout
            c1=cpu(p.pid); t=json.loads(out)[0]["total"]
            tot[spec][0]+=t["count"]; tot[spec][1]+=c1-c0; tot[spec][2]+=t["count"]/t["ops_per_sec"]
    for spec in tot:
        n,c,el=tot[spec]
        print(f"{w} {spec}: ops_s={n/el:.0f} us_cpu_per_op={c*1e6/n:.1f}")
finally:
    for spec,binp,url,p,d in srvs:
        p.terminate(); p.wait(); shutil.rmtree(d,ignore_errors=True)
        try: os.remove(d+".log")
        except OSError: pass
