package replay

import (
	"fmt"

	"github.com/aisimulate/aisimulate/core/config"
	"github.com/aisimulate/aisimulate/core/engine"
	"github.com/aisimulate/aisimulate/core/hardware"
	"github.com/aisimulate/aisimulate/core/model"
	"github.com/aisimulate/aisimulate/core/perf"
	"github.com/aisimulate/aisimulate/core/perf/aic"
)

// deployment is everything built from spec.engine.
type deployment struct {
	arch      *model.Arch
	sys       *hardware.System
	perf      perf.Model
	kvDtype   model.Dtype
	engineCfg engine.Config
	count, tp int
	placement string
}

func cfgErr(field string, err error) error { return &config.Error{Field: field, Msg: err.Error()} }

func buildDeployment(s *config.Spec) (*deployment, error) {
	e := &s.Engine
	arch, err := model.Load(e.Model, e.ModelConfigDir)
	if err != nil {
		return nil, cfgErr("engine.model", err)
	}
	sys, err := hardware.Lookup(e.System)
	if err != nil {
		return nil, cfgErr("engine.system", err)
	}
	a := e.Workers.Aggregated
	if err := arch.Validate(a.TP); err != nil {
		return nil, cfgErr("engine.workers.aggregated.tp", err)
	}
	d := &deployment{arch: arch, sys: sys, count: a.Count, tp: a.TP, placement: a.Placement}
	// engine.quantization: weights default to the checkpoint's (config.json),
	// the KV cache to config.DefaultKVCacheDtype. The weight format also sets
	// the weight memory of the KV budget.
	kvName := config.DefaultKVCacheDtype
	if q := e.Quantization; q != nil {
		if q.Weights != "" {
			wd, err := model.ParseDtype(q.Weights)
			if err != nil {
				return nil, cfgErr("engine.quantization.weights", err)
			}
			arch.WeightDtype = wd
		}
		if q.KVCache != "" {
			kvName = q.KVCache
		}
	}
	kvDtype, err := model.ParseDtype(kvName)
	if err != nil {
		return nil, cfgErr("engine.quantization.kv_cache", err)
	}
	d.kvDtype = kvDtype

	switch e.Perf.Source {
	case "aic":
		opt := aic.Options{Database: e.Perf.Database, Backend: e.Backend, Version: e.Perf.BackendVersion, TP: a.TP,
			WeightDtype: arch.WeightDtype, KVDtype: kvDtype, MaxTokens: e.Scheduler.MaxNumBatchedTokens}
		if v := e.Perf.PassOverheadUs; v != nil {
			opt.PassOverheadUs = *v
		} else {
			opt.PassOverheadUs = aic.DefaultPassOverheadUs
		}
		m, err := aic.New(arch, sys, opt)
		if err != nil {
			return nil, cfgErr("engine.perf", err)
		}
		d.perf = m
	case "linear":
		d.perf = &perf.Linear{BaseMs: *e.Perf.BaseMs, PerPrefillTokenMs: *e.Perf.PerPrefillTokenMs, PerDecodeSeqMs: *e.Perf.PerDecodeSeqMs}
	case "roofline":
		p := perf.DefaultRooflineParams()
		if v := e.Perf.ComputeEfficiency; v != nil {
			p.ComputeEfficiency = *v
		}
		if v := e.Perf.MemoryEfficiency; v != nil {
			p.MemoryEfficiency = *v
		}
		if v := e.Perf.PassOverheadUs; v != nil {
			p.PassOverheadUs = *v
		}
		rl, err := perf.NewRoofline(arch, sys, perf.RooflineOptions{TP: a.TP, WeightDtype: arch.WeightDtype, KVDtype: kvDtype, Params: p})
		if err != nil {
			return nil, cfgErr("engine.perf", err)
		}
		d.perf = rl
	}

	sc := &e.Scheduler
	blocks := sc.NumGPUBlocks
	if blocks == 0 {
		blocks, err = perf.KVCapacityBlocks(arch, sys, a.TP, kvDtype, sc.MaxNumBatchedTokens, sc.GPUMemoryUtilization, sc.BlockSize)
		if err != nil {
			return nil, cfgErr("engine.scheduler.gpu_memory_utilization", err)
		}
	}
	maxLen := sc.MaxModelLen
	if maxLen == 0 {
		maxLen = arch.MaxPositionEmbeddings
	} else if maxLen > arch.MaxPositionEmbeddings {
		// vLLM refuses a max_model_len beyond the model's trained context.
		return nil, &config.Error{Field: "engine.scheduler.max_model_len",
			Msg: fmt.Sprintf("%d exceeds %s's max_position_embeddings (%d)", maxLen, arch.Name, arch.MaxPositionEmbeddings)}
	}
	d.engineCfg = engine.Config{
		MaxNumSeqs: sc.MaxNumSeqs, MaxNumBatchedTokens: sc.MaxNumBatchedTokens, BlockSize: sc.BlockSize,
		NumBlocks: blocks, MaxModelLen: maxLen, PrefixCaching: sc.EnablePrefixCaching,
	}
	return d, nil
}

func (d *deployment) metadata(s *config.Spec, workers []*engine.Worker) map[string]any {
	kv := make([]map[string]int64, len(workers))
	busy := make([]float64, len(workers))
	passes := make([]int64, len(workers))
	for i, w := range workers {
		st := w.KVStats()
		kv[i] = map[string]int64{"allocated": st.Allocated, "reused": st.Reused, "released": st.Released,
			"evicted": st.Evicted, "free": int64(w.KVFree() - w.KVCached()), "cached": int64(w.KVCached())}
		busy[i] = float64(w.BusyNs) / 1e6
		passes[i] = w.Passes
	}
	out := map[string]any{
		"kv_blocks":          kv,
		"worker_busy_ms":     busy,
		"worker_passes":      passes,
		"aisimulate_version": Version,
		"perf_model":         d.perf.Name(),
		"model":              d.arch.Name,
		"system":             d.sys.Name,
		"workers":            d.count,
		"tp":                 d.tp,
		"gpus":               d.count * d.tp,
		"num_gpu_blocks":     d.engineCfg.NumBlocks,
		"block_size":         d.engineCfg.BlockSize,
		"max_model_len":      d.engineCfg.MaxModelLen,
		"kv_bytes_per_token": d.arch.KVBytesPerToken(d.tp, d.kvDtype.Bytes()),
		"kv_cache_dtype":     string(d.kvDtype),
		"weight_dtype":       string(d.arch.WeightDtype),
		"spec":               jsonRaw(s.JSON()),
	}
	// perf models with provenance (aic: the tables read, versions, stand-ins)
	if pm, ok := d.perf.(interface{ Metadata() map[string]any }); ok {
		out["perf_metadata"] = pm.Metadata()
	}
	return out
}

// Version of the simulation core, reported in metadata.
const Version = "0.1.0"
