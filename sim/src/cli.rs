//! `lrab sim serve`: run the simulated backend standalone.

use std::path::PathBuf;

use clap::Args;

use crate::{serve, FaultConfig, SimConfig};

/// Arguments of `lrab sim serve`.
#[derive(Debug, Clone, Args)]
pub struct SimArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:11434")]
    pub addr: String,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Task pack folder (default: the built-in pack).
    #[arg(long)]
    pub pack: Option<PathBuf>,
    /// Context reported for requests without num_ctx.
    #[arg(long, default_value_t = 4096)]
    pub default_ctx: u64,
    /// Folder of profile files (`*.toml`, one per model) replacing the committed ones; every
    /// file is validated first and any problem is an error naming the file and field.
    #[arg(long)]
    pub profiles: Option<PathBuf>,
    /// Real seconds slept per modelled second of each reply (e.g. 0.001; 0 = no pacing).
    #[arg(long, default_value_t = 0.0)]
    pub time_scale: f64,
    /// Write every chat request and reply into this folder.
    #[arg(long)]
    pub log_dir: Option<PathBuf>,
    /// Probability of an HTTP 500 per request.
    #[arg(long, default_value_t = 0.0)]
    pub fault_500: f64,
    /// Probability of a slow response, and its delay.
    #[arg(long, default_value_t = 0.0)]
    pub fault_slow: f64,
    #[arg(long, default_value_t = 2000)]
    pub fault_slow_ms: u64,
    /// Probability of a dropped connection.
    #[arg(long, default_value_t = 0.0)]
    pub fault_drop: f64,
    /// Probability of a malformed JSON body.
    #[arg(long, default_value_t = 0.0)]
    pub fault_malformed: f64,
    /// Probability of a mid-stream disconnect.
    #[arg(long, default_value_t = 0.0)]
    pub fault_midstream: f64,
    /// The API served: `ollama` (native and its /v1) or `openai` (only the OpenAI API, as vLLM
    /// serves it: no /api/*, thinking by chat_template_kwargs, long prompts refused).
    #[arg(long, value_enum, default_value = "ollama")]
    pub api: crate::ServeApi,
}

fn check_prob(name: &str, p: f64) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&p) {
        anyhow::bail!("--{name} must be between 0 and 1, got {p}");
    }
    Ok(())
}

impl SimArgs {
    pub fn config(&self) -> anyhow::Result<SimConfig> {
        for (n, p) in [
            ("fault-500", self.fault_500),
            ("fault-slow", self.fault_slow),
            ("fault-drop", self.fault_drop),
            ("fault-malformed", self.fault_malformed),
            ("fault-midstream", self.fault_midstream),
        ] {
            check_prob(n, p)?;
        }
        if !self.time_scale.is_finite() || self.time_scale < 0.0 || self.time_scale > 10.0 {
            anyhow::bail!(
                "--time-scale must be between 0 and 10, got {}",
                self.time_scale
            );
        }
        let profiles = match &self.profiles {
            Some(d) => Some(crate::profile::load_dir(d)?),
            None => None,
        };
        if let Some(p) = &self.pack {
            if !p.is_dir() {
                anyhow::bail!("--pack {}: not a folder", p.display());
            }
        }
        Ok(SimConfig {
            seed: self.seed,
            pack: self.pack.clone(),
            default_ctx: self.default_ctx,
            time_scale: self.time_scale,
            profiles,
            log_dir: self.log_dir.clone(),
            api: self.api,
            faults: FaultConfig {
                http500: self.fault_500,
                slow: self.fault_slow,
                slow_ms: self.fault_slow_ms,
                drop: self.fault_drop,
                malformed: self.fault_malformed,
                midstream: self.fault_midstream,
                first_attempts: None,
            },
            ..Default::default()
        })
    }
}

/// Serves until Ctrl-C (or stdin closes when `LRAB_SIM_EXIT_ON_EOF` is set).
pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    let handle = serve(&args.addr, args.config()?)?;
    for n in &handle.notes {
        eprintln!("lrab-sim: task pack: {n}");
    }
    println!("lrab-sim listening on {}", handle.url());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    handle.shutdown();
    Ok(())
}
