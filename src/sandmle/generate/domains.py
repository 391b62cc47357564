"""The domain library of the procedural Data Strategist: domain-true feature names, units and vocabularies.

Each `Domain` lists what an industry scenario can measure (numeric and categorical columns with plausible units and
distributions), what it can predict (binary, multi-class, multi-label, regression targets, rankable items), and the
material for the other modalities (image subject, text aspects with cue words, series channels). The Strategist
remaps a seed DNA onto a domain; the Architect picks columns from it and writes the hidden rule over them.

Distribution specs (used by `sandmle.simulate.tabular.draw_feature`):
``("normal", loc, scale)``, ``("lognormal", mu, sigma)``, ``("uniform", low, high)``, ``("poisson", lam)``,
``("binary", p)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache


Dist = tuple  # see module docstring


@dataclass(frozen=True)
class Domain:
    slug: str
    title: str
    entity: str  # what one row is
    numeric: tuple[tuple[str, str, str, Dist], ...]  # (name, unit, description, distribution)
    categorical: tuple[tuple[str, str, tuple[str, ...]], ...]  # (name, description, categories)
    binary: tuple[tuple[str, str], ...]  # (target name, what a positive means)
    multiclass: tuple[tuple[str, str, tuple[str, ...]], ...]  # (target, description, classes)
    regression: tuple[tuple[str, str, str], ...]  # (target, unit, description)
    labels: tuple[str, ...]  # multi-label names
    items: tuple[str, ...]  # rankable items (recommendations / destinations)
    image_subject: str = ""  # e.g. "leaf photo"; empty = no image scenarios
    image_object: str = "spot"  # the thing drawn on it
    document: str = "report"
    aspects: dict[str, tuple[str, ...]] = field(default_factory=dict)  # text aspect -> cue words
    channels: tuple[tuple[str, str], ...] = ()  # series channels (name, unit)
    series_entity: str = "sensor"


_FILLER = (
    "the",
    "a",
    "and",
    "with",
    "was",
    "for",
    "after",
    "on",
    "this",
    "that",
    "very",
    "then",
    "also",
    "some",
    "it",
    "we",
    "they",
    "again",
    "today",
    "about",
    "there",
    "more",
    "when",
    "just",
    "from",
    "only",
    "still",
)


def _d(**kw) -> Domain:
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    return Domain(**kw)


DOMAINS: tuple[Domain, ...] = (
    _d(
        slug="agriculture",
        title="Precision agriculture",
        entity="field plot",
        numeric=[
            ("soil_moisture_pct", "%", "volumetric soil moisture", ("normal", 28, 7)),
            ("canopy_temp_c", "degC", "canopy temperature at noon", ("normal", 26, 4)),
            ("leaf_nitrogen_pct", "%", "leaf nitrogen content", ("normal", 3.1, 0.6)),
            ("rainfall_mm", "mm", "rainfall over the last 30 days", ("lognormal", 4.0, 0.5)),
            ("ndvi_index", "", "vegetation index from drone imagery", ("uniform", 0.2, 0.9)),
            ("soil_ph", "pH", "soil acidity", ("normal", 6.4, 0.7)),
            ("planting_density", "plants/m2", "planting density", ("poisson", 9)),
            ("days_since_spray", "days", "days since last fungicide spray", ("poisson", 14)),
            ("elevation_m", "m", "plot elevation", ("normal", 320, 80)),
            ("wind_speed_ms", "m/s", "mean wind speed", ("lognormal", 1.2, 0.4)),
        ],
        categorical=[
            ("crop_variety", "cultivar planted", ("wheat_a", "wheat_b", "barley", "maize")),
            ("irrigation_type", "irrigation system", ("drip", "sprinkler", "none")),
        ],
        binary=[("blight_detected", "the plot develops blight this season")],
        multiclass=[
            ("disease_stage", "disease stage", ("healthy", "early", "moderate", "severe", "critical", "lost"))
        ],
        regression=[("yield_t_ha", "t/ha", "harvest yield"), ("protein_pct", "%", "grain protein content")],
        labels=["rust", "scab", "mildew", "aphids", "drought_stress"],
        items=["fertiliser_n", "fertiliser_p", "fungicide", "herbicide", "irrigation", "lime", "mulch", "cover_crop"],
        image_subject="leaf photo",
        image_object="lesion",
        document="agronomist field note",
        aspects={
            "leaf_damage": ("yellowing", "spots", "wilting", "lesions", "curling"),
            "pest_pressure": ("aphids", "beetles", "larvae", "mites", "chewed"),
            "water_stress": ("dry", "cracked", "parched", "drooping", "brittle"),
            "vigour": ("lush", "green", "vigorous", "dense", "tall"),
        },
        channels=[("soil_moisture_pct", "%"), ("canopy_temp_c", "degC"), ("leaf_wetness", "")],
        series_entity="field sensor",
    ),
    _d(
        slug="healthcare",
        title="Clinical care",
        entity="patient visit",
        numeric=[
            ("age_years", "years", "patient age", ("normal", 54, 15)),
            ("systolic_bp_mmhg", "mmHg", "systolic blood pressure", ("normal", 128, 16)),
            ("bmi", "kg/m2", "body-mass index", ("normal", 27, 4.5)),
            ("glucose_mg_dl", "mg/dL", "fasting glucose", ("lognormal", 4.6, 0.2)),
            ("creatinine_mg_dl", "mg/dL", "serum creatinine", ("lognormal", 0.0, 0.3)),
            ("heart_rate_bpm", "bpm", "resting heart rate", ("normal", 74, 11)),
            ("prior_admissions", "count", "admissions in the last year", ("poisson", 1.2)),
            ("hba1c_pct", "%", "glycated haemoglobin", ("normal", 6.1, 0.9)),
            ("cholesterol_mmol", "mmol/L", "total cholesterol", ("normal", 5.2, 1.0)),
            ("smoker", "", "current smoker", ("binary", 0.25)),
        ],
        categorical=[
            ("ward", "admitting ward", ("cardiology", "general", "renal", "oncology")),
            ("sex", "recorded sex", ("female", "male")),
        ],
        binary=[("readmitted_30d", "the patient is readmitted within 30 days")],
        multiclass=[
            (
                "severity_grade",
                "clinical severity grade",
                ("none", "mild", "moderate", "severe", "proliferative", "critical"),
            )
        ],
        regression=[
            ("length_of_stay_days", "days", "length of hospital stay"),
            ("recovery_score", "points", "recovery score at discharge"),
        ],
        labels=["arrhythmia", "hypertension", "diabetes", "renal_failure", "anaemia"],
        items=["ecg", "mri", "ct_scan", "blood_panel", "ultrasound", "biopsy", "xray", "stress_test"],
        image_subject="dermoscopy patch",
        image_object="lesion",
        document="clinical note",
        aspects={
            "pain": ("pain", "aching", "sore", "tender", "cramping"),
            "breathing": ("breathless", "wheezing", "cough", "dyspnoea", "oxygen"),
            "fatigue": ("tired", "fatigue", "lethargic", "weak", "exhausted"),
            "improvement": ("improving", "stable", "recovered", "comfortable", "mobile"),
        },
        channels=[("ecg_mv", "mV"), ("spo2_pct", "%"), ("resp_rate", "breaths/min")],
        series_entity="bedside monitor",
    ),
    _d(
        slug="finance",
        title="Consumer lending",
        entity="loan application",
        numeric=[
            ("annual_income_k", "kUSD", "declared annual income", ("lognormal", 4.0, 0.45)),
            ("loan_amount_k", "kUSD", "requested amount", ("lognormal", 2.7, 0.6)),
            ("credit_utilisation", "ratio", "revolving credit utilisation", ("uniform", 0.0, 1.0)),
            ("months_employed", "months", "months with current employer", ("poisson", 40)),
            ("open_accounts", "count", "open credit lines", ("poisson", 6)),
            ("late_payments_24m", "count", "late payments in 24 months", ("poisson", 0.8)),
            ("debt_to_income", "ratio", "debt-to-income ratio", ("uniform", 0.05, 0.6)),
            ("age_years", "years", "applicant age", ("normal", 41, 12)),
            ("savings_k", "kUSD", "savings balance", ("lognormal", 2.0, 1.0)),
            ("homeowner", "", "owns a home", ("binary", 0.45)),
        ],
        categorical=[
            ("loan_purpose", "declared purpose", ("car", "education", "home", "business", "medical")),
            ("employment_type", "employment type", ("salaried", "self_employed", "contract")),
        ],
        binary=[("defaulted", "the loan defaults within a year")],
        multiclass=[("risk_band", "internal risk band", ("a", "b", "c", "d", "e", "f"))],
        regression=[
            ("loss_given_default_pct", "%", "share of the loan lost"),
            ("interest_rate_pct", "%", "offered interest rate"),
        ],
        labels=["fraud_flag", "early_repayment", "restructured", "collections"],
        items=[
            "savings_plus",
            "gold_card",
            "travel_card",
            "mortgage_fix",
            "auto_loan",
            "micro_loan",
            "insurance_pack",
            "broker_account",
        ],
        document="customer complaint",
        aspects={
            "fees": ("fee", "charge", "overcharged", "penalty", "surcharge"),
            "delay": ("waiting", "delayed", "slow", "pending", "weeks"),
            "fraud": ("unauthorised", "stolen", "fraud", "suspicious", "scam"),
            "satisfaction": ("helpful", "quick", "resolved", "thanks", "friendly"),
        },
        channels=[("balance_k", "kUSD"), ("spend_k", "kUSD")],
        series_entity="account",
    ),
    _d(
        slug="retail",
        title="Online retail",
        entity="customer order",
        numeric=[
            ("basket_value_usd", "USD", "basket value", ("lognormal", 3.8, 0.6)),
            ("items_in_basket", "count", "items in basket", ("poisson", 4)),
            ("days_since_last_order", "days", "recency", ("lognormal", 3.0, 0.8)),
            ("orders_last_year", "count", "frequency", ("poisson", 6)),
            ("discount_pct", "%", "discount applied", ("uniform", 0, 40)),
            ("page_views", "count", "pages viewed in session", ("poisson", 12)),
            ("session_minutes", "min", "session length", ("lognormal", 2.3, 0.6)),
            ("customer_age", "years", "customer age", ("normal", 38, 12)),
            ("return_rate", "ratio", "historic return rate", ("uniform", 0.0, 0.5)),
            ("is_member", "", "loyalty member", ("binary", 0.4)),
        ],
        categorical=[
            ("channel", "acquisition channel", ("search", "social", "email", "direct")),
            ("device", "device used", ("mobile", "desktop", "tablet")),
        ],
        binary=[("will_churn", "the customer does not order again within 90 days")],
        multiclass=[
            ("customer_segment", "marketing segment", ("bargain", "loyal", "occasional", "premium", "seasonal", "new"))
        ],
        regression=[
            ("next_order_value_usd", "USD", "value of the next order"),
            ("lifetime_value_usd", "USD", "12-month customer value"),
        ],
        labels=["returned_item", "used_coupon", "left_review", "bought_gift"],
        items=["sneakers", "jacket", "jeans", "tshirt", "dress", "hoodie", "scarf", "backpack"],
        image_subject="product photo",
        image_object="defect",
        document="product review",
        aspects={
            "quality": ("sturdy", "durable", "cheap", "flimsy", "broke"),
            "shipping": ("late", "delivery", "package", "courier", "arrived"),
            "fit": ("tight", "loose", "size", "fits", "small"),
            "price": ("expensive", "bargain", "price", "worth", "overpriced"),
        },
        channels=[("daily_sales_units", "units"), ("web_visits", "count")],
        series_entity="store",
    ),
    _d(
        slug="manufacturing",
        title="Smart manufacturing",
        entity="production batch",
        numeric=[
            ("spindle_speed_rpm", "rpm", "spindle speed", ("normal", 1500, 200)),
            ("feed_rate_mm_s", "mm/s", "feed rate", ("normal", 12, 3)),
            ("coolant_temp_c", "degC", "coolant temperature", ("normal", 35, 5)),
            ("vibration_rms_g", "g", "vibration RMS", ("lognormal", -1.0, 0.4)),
            ("tool_wear_min", "min", "tool usage since change", ("uniform", 0, 240)),
            ("humidity_pct", "%", "shop-floor humidity", ("normal", 45, 10)),
            ("pressure_bar", "bar", "hydraulic pressure", ("normal", 180, 15)),
            ("operator_shift_hours", "h", "hours into the shift", ("uniform", 0, 8)),
            ("batch_size", "units", "units in batch", ("poisson", 50)),
            ("material_hardness_hb", "HB", "material hardness", ("normal", 210, 25)),
        ],
        categorical=[
            ("machine_line", "production line", ("line_a", "line_b", "line_c")),
            ("supplier", "raw material supplier", ("north", "east", "south", "west")),
        ],
        binary=[("machine_failure", "the machine fails during the batch")],
        multiclass=[("defect_type", "dominant defect", ("none", "scratch", "crack", "porosity", "warp", "burr"))],
        regression=[
            ("surface_roughness_um", "um", "surface roughness"),
            ("throughput_units_h", "units/h", "throughput"),
        ],
        labels=["scratch", "dent", "misalignment", "discolouration", "crack"],
        items=[
            "recalibrate",
            "replace_tool",
            "clean_nozzle",
            "adjust_feed",
            "cool_down",
            "inspect",
            "lubricate",
            "reorder_stock",
        ],
        image_subject="surface inspection image",
        image_object="defect",
        document="maintenance log",
        aspects={
            "noise": ("grinding", "rattle", "squeal", "noisy", "knocking"),
            "heat": ("overheating", "hot", "smoke", "burnt", "temperature"),
            "leak": ("leak", "drip", "oil", "puddle", "seal"),
            "routine": ("routine", "checked", "normal", "nominal", "ok"),
        },
        channels=[("vibration_g", "g"), ("motor_current_a", "A"), ("temperature_c", "degC")],
        series_entity="machine",
    ),
    _d(
        slug="energy",
        title="Energy and utilities",
        entity="site-day",
        numeric=[
            ("wind_speed_ms", "m/s", "hub-height wind speed", ("lognormal", 2.0, 0.35)),
            ("air_temp_c", "degC", "air temperature", ("normal", 14, 8)),
            ("solar_irradiance_wm2", "W/m2", "irradiance", ("uniform", 50, 950)),
            ("turbine_age_years", "years", "asset age", ("uniform", 0, 20)),
            ("grid_load_mw", "MW", "regional load", ("normal", 620, 90)),
            ("cloud_cover_pct", "%", "cloud cover", ("uniform", 0, 100)),
            ("rotor_rpm", "rpm", "rotor speed", ("normal", 14, 3)),
            ("maintenance_days_ago", "days", "days since maintenance", ("poisson", 60)),
            ("humidity_pct", "%", "relative humidity", ("normal", 65, 15)),
            ("holiday", "", "public holiday", ("binary", 0.1)),
        ],
        categorical=[
            ("site_region", "site region", ("coastal", "plains", "hills", "offshore")),
            ("asset_model", "asset model", ("m1", "m2", "m3")),
        ],
        binary=[("outage_event", "an unplanned outage happens")],
        multiclass=[("fault_class", "fault category", ("normal", "pitch", "gearbox", "generator", "yaw", "sensor"))],
        regression=[
            ("energy_output_mwh", "MWh", "daily energy output"),
            ("efficiency_pct", "%", "conversion efficiency"),
        ],
        labels=["icing", "curtailment", "gearbox_alarm", "grid_fault"],
        items=[
            "inspect_blades",
            "replace_bearing",
            "update_firmware",
            "clean_panels",
            "recalibrate_yaw",
            "oil_change",
            "tighten_bolts",
            "replace_sensor",
        ],
        image_subject="thermal panel image",
        image_object="hotspot",
        document="operator log",
        aspects={
            "alarm": ("alarm", "trip", "fault", "warning", "shutdown"),
            "weather": ("storm", "gusts", "ice", "lightning", "fog"),
            "output": ("output", "production", "yield", "megawatt", "generation"),
            "repair": ("repaired", "replaced", "fixed", "serviced", "restored"),
        },
        channels=[("power_kw", "kW"), ("wind_speed_ms", "m/s"), ("temperature_c", "degC")],
        series_entity="smart meter",
    ),
    _d(
        slug="logistics",
        title="Logistics and mobility",
        entity="trip",
        numeric=[
            ("distance_km", "km", "route distance", ("lognormal", 1.6, 0.7)),
            ("pickup_hour", "h", "hour of pickup", ("uniform", 0, 24)),
            ("passenger_count", "count", "passengers", ("poisson", 1.5)),
            ("traffic_index", "", "congestion index", ("uniform", 0, 1)),
            ("package_weight_kg", "kg", "package weight", ("lognormal", 1.5, 0.8)),
            ("driver_rating", "stars", "driver rating", ("normal", 4.5, 0.3)),
            ("stops", "count", "intermediate stops", ("poisson", 2)),
            ("fuel_price_usd", "USD/l", "fuel price", ("normal", 1.6, 0.15)),
            ("temperature_c", "degC", "outside temperature", ("normal", 15, 9)),
            ("weekend", "", "weekend trip", ("binary", 0.28)),
        ],
        categorical=[
            ("vehicle_type", "vehicle class", ("sedan", "van", "bike", "truck")),
            ("zone", "pickup zone", ("downtown", "airport", "suburb", "harbour")),
        ],
        binary=[("late_delivery", "the delivery arrives late")],
        multiclass=[("delay_band", "delay band", ("on_time", "minor", "moderate", "major", "severe", "lost"))],
        regression=[("fare_usd", "USD", "trip fare"), ("duration_min", "min", "trip duration")],
        labels=["damaged", "rerouted", "customs_hold", "signature_missing"],
        items=["paris", "lisbon", "berlin", "rome", "madrid", "vienna", "prague", "oslo"],
        image_subject="road camera frame",
        image_object="pothole",
        document="dispatch note",
        aspects={
            "traffic": ("traffic", "jam", "congestion", "detour", "roadworks"),
            "damage": ("damaged", "crushed", "torn", "wet", "broken"),
            "weather": ("rain", "snow", "ice", "flooded", "storm"),
            "smooth": ("smooth", "quick", "early", "easy", "clear"),
        },
        channels=[("speed_kmh", "km/h"), ("acceleration_ms2", "m/s2"), ("heading_deg", "deg")],
        series_entity="vehicle",
    ),
    _d(
        slug="real-estate",
        title="Residential real estate",
        entity="property listing",
        numeric=[
            ("living_area_m2", "m2", "living area", ("lognormal", 4.6, 0.35)),
            ("lot_area_m2", "m2", "lot area", ("lognormal", 6.0, 0.6)),
            ("bedrooms", "count", "bedrooms", ("poisson", 3)),
            ("year_built", "year", "construction year", ("normal", 1980, 22)),
            ("distance_center_km", "km", "distance to city centre", ("lognormal", 1.8, 0.6)),
            ("overall_quality", "1-10", "overall quality rating", ("poisson", 6)),
            ("garage_spaces", "count", "garage spaces", ("poisson", 1.3)),
            ("school_rating", "1-10", "nearest school rating", ("uniform", 1, 10)),
            ("crime_rate", "per 1k", "local crime rate", ("lognormal", 1.0, 0.5)),
            ("has_pool", "", "has a pool", ("binary", 0.15)),
        ],
        categorical=[
            ("neighbourhood", "neighbourhood", ("old_town", "riverside", "hills", "industrial", "suburbs")),
            ("building_type", "building type", ("detached", "semi", "apartment", "townhouse")),
        ],
        binary=[("sold_above_ask", "the property sells above asking price")],
        multiclass=[("price_tier", "price tier", ("budget", "standard", "upper", "premium", "luxury", "trophy"))],
        regression=[("sale_price_k", "kUSD", "sale price"), ("days_on_market", "days", "days until sold")],
        labels=["needs_renovation", "energy_certified", "waterfront", "heritage_listed"],
        items=["house_a", "house_b", "loft_c", "flat_d", "villa_e", "cottage_f", "studio_g", "duplex_h"],
        image_subject="aerial roof tile",
        image_object="damage patch",
        document="listing description",
        aspects={
            "space": ("spacious", "large", "roomy", "open", "airy"),
            "condition": ("renovated", "new", "modern", "updated", "pristine"),
            "issues": ("damp", "cracks", "old", "repair", "noisy"),
            "location": ("central", "quiet", "park", "transport", "schools"),
        },
        channels=[("price_index", ""), ("listings", "count")],
        series_entity="district",
    ),
    _d(
        slug="telecom",
        title="Telecommunications",
        entity="subscriber",
        numeric=[
            ("monthly_charge_usd", "USD", "monthly bill", ("normal", 65, 20)),
            ("tenure_months", "months", "tenure", ("poisson", 30)),
            ("data_usage_gb", "GB", "monthly data use", ("lognormal", 2.2, 0.7)),
            ("dropped_calls", "count", "dropped calls last month", ("poisson", 2)),
            ("support_calls", "count", "support calls", ("poisson", 1.5)),
            ("signal_dbm", "dBm", "average signal strength", ("normal", -85, 10)),
            ("roaming_minutes", "min", "roaming minutes", ("lognormal", 1.5, 1.0)),
            ("contract_months_left", "months", "contract months left", ("uniform", 0, 24)),
            ("devices", "count", "devices on plan", ("poisson", 2)),
            ("autopay", "", "pays automatically", ("binary", 0.5)),
        ],
        categorical=[
            ("plan", "tariff plan", ("basic", "plus", "unlimited", "family")),
            ("region", "home region", ("north", "south", "east", "west")),
        ],
        binary=[("churned", "the subscriber leaves next month")],
        multiclass=[
            (
                "ticket_category",
                "support ticket category",
                ("billing", "network", "device", "contract", "roaming", "other"),
            )
        ],
        regression=[("next_bill_usd", "USD", "next month's bill"), ("data_next_month_gb", "GB", "next month's data")],
        labels=["slow_data", "billing_error", "coverage_gap", "device_fault"],
        items=[
            "plan_upgrade",
            "extra_data",
            "family_add",
            "roaming_pack",
            "device_swap",
            "streaming_bundle",
            "loyalty_discount",
            "insurance",
        ],
        image_subject="spectrogram tile",
        image_object="burst",
        document="support ticket",
        aspects={
            "network": ("signal", "dropped", "outage", "coverage", "slow"),
            "billing": ("bill", "charged", "refund", "invoice", "overcharge"),
            "anger": ("angry", "terrible", "worst", "useless", "cancel"),
            "praise": ("great", "fast", "thanks", "excellent", "reliable"),
        },
        channels=[("throughput_mbps", "Mbps"), ("latency_ms", "ms"), ("packet_loss_pct", "%")],
        series_entity="cell tower",
    ),
    _d(
        slug="environment",
        title="Environmental monitoring",
        entity="monitoring station-day",
        numeric=[
            ("pm25_ugm3", "ug/m3", "fine particulate matter", ("lognormal", 2.6, 0.5)),
            ("no2_ppb", "ppb", "nitrogen dioxide", ("lognormal", 2.8, 0.4)),
            ("ozone_ppb", "ppb", "ozone", ("normal", 35, 10)),
            ("temperature_c", "degC", "air temperature", ("normal", 16, 8)),
            ("wind_speed_ms", "m/s", "wind speed", ("lognormal", 1.1, 0.5)),
            ("humidity_pct", "%", "relative humidity", ("normal", 60, 15)),
            ("elevation_m", "m", "station elevation", ("lognormal", 5.0, 0.8)),
            ("slope_deg", "deg", "terrain slope", ("uniform", 0, 35)),
            ("distance_to_water_m", "m", "distance to surface water", ("lognormal", 5.5, 1.0)),
            ("industrial_nearby", "", "industry within 5 km", ("binary", 0.3)),
        ],
        categorical=[
            ("land_use", "land use class", ("urban", "forest", "farmland", "wetland")),
            ("soil_type", "soil type", ("clay", "loam", "sand", "peat")),
        ],
        binary=[("pollution_alert", "an air-quality alert is issued")],
        multiclass=[("cover_class", "land cover class", ("spruce", "pine", "aspen", "willow", "fir", "meadow"))],
        regression=[("aqi_next_day", "AQI", "next-day air quality index"), ("runoff_mm", "mm", "surface runoff")],
        labels=["smog", "wildfire_smoke", "pollen", "dust"],
        items=["site_a", "site_b", "site_c", "site_d", "site_e", "site_f", "site_g", "site_h"],
        image_subject="satellite tile",
        image_object="plume",
        document="field survey note",
        aspects={
            "smoke": ("smoke", "haze", "ash", "fire", "burning"),
            "water": ("flood", "runoff", "stream", "wet", "pooling"),
            "wildlife": ("birds", "deer", "nests", "tracks", "frogs"),
            "clear": ("clear", "calm", "clean", "bright", "fresh"),
        },
        channels=[("pm25_ugm3", "ug/m3"), ("seismic_um_s", "um/s"), ("temperature_c", "degC")],
        series_entity="station",
    ),
    _d(
        slug="insurance",
        title="Insurance underwriting",
        entity="policy",
        numeric=[
            ("driver_age", "years", "main driver age", ("normal", 44, 14)),
            ("vehicle_age_years", "years", "vehicle age", ("uniform", 0, 15)),
            ("annual_mileage_k", "k km", "annual mileage", ("lognormal", 2.6, 0.4)),
            ("prior_claims", "count", "claims in 5 years", ("poisson", 0.6)),
            ("premium_usd", "USD", "annual premium", ("lognormal", 6.8, 0.35)),
            ("credit_score", "points", "credit score", ("normal", 680, 60)),
            ("years_licensed", "years", "years licensed", ("uniform", 1, 40)),
            ("deductible_usd", "USD", "deductible", ("uniform", 100, 1000)),
            ("vehicle_value_k", "kUSD", "vehicle value", ("lognormal", 3.0, 0.5)),
            ("garaged", "", "vehicle garaged overnight", ("binary", 0.55)),
        ],
        categorical=[
            ("coverage_level", "coverage level", ("basic", "standard", "premium")),
            ("territory", "rating territory", ("t1", "t2", "t3", "t4", "t5")),
        ],
        binary=[("filed_claim", "the policy holder files a claim this year")],
        multiclass=[("claim_type", "claim category", ("none", "collision", "theft", "glass", "liability", "weather"))],
        regression=[("claim_cost_usd", "USD", "expected claim cost"), ("loss_ratio", "ratio", "loss ratio")],
        labels=["fraud_review", "total_loss", "injury", "litigation"],
        items=[
            "roadside",
            "glass_cover",
            "rental_car",
            "legal_cover",
            "gap_cover",
            "new_car",
            "no_claims",
            "pet_cover",
        ],
        document="adjuster note",
        aspects={
            "injury": ("injury", "hospital", "whiplash", "ambulance", "hurt"),
            "damage": ("dent", "smashed", "scratched", "totalled", "cracked"),
            "suspicion": ("inconsistent", "unclear", "disputed", "suspicious", "late"),
            "cooperative": ("cooperative", "prompt", "documented", "clear", "witness"),
        },
        channels=[("claims_per_day", "count"), ("payout_k", "kUSD")],
        series_entity="portfolio",
    ),
    _d(
        slug="materials",
        title="Materials discovery",
        entity="candidate compound",
        numeric=[
            ("lattice_a_ang", "A", "lattice constant a", ("normal", 5.5, 0.8)),
            ("lattice_angle_deg", "deg", "lattice angle", ("normal", 90, 6)),
            ("al_fraction", "", "aluminium fraction", ("uniform", 0, 1)),
            ("ga_fraction", "", "gallium fraction", ("uniform", 0, 1)),
            ("atoms_per_cell", "count", "atoms in unit cell", ("poisson", 40)),
            ("density_g_cm3", "g/cm3", "density", ("normal", 5.2, 0.9)),
            ("electronegativity", "", "mean electronegativity", ("normal", 1.9, 0.2)),
            ("anneal_temp_c", "degC", "annealing temperature", ("normal", 700, 90)),
            ("grain_size_um", "um", "mean grain size", ("lognormal", 1.0, 0.5)),
            ("doped", "", "dopant added", ("binary", 0.4)),
        ],
        categorical=[
            ("spacegroup", "space group", ("sg12", "sg33", "sg167", "sg194", "sg206", "sg227")),
            ("synthesis_route", "synthesis route", ("sol_gel", "sputter", "cvd")),
        ],
        binary=[("is_stable", "the compound is thermodynamically stable")],
        multiclass=[
            ("phase", "crystal phase", ("cubic", "hexagonal", "monoclinic", "orthorhombic", "trigonal", "amorphous"))
        ],
        regression=[("formation_energy_ev", "eV/atom", "formation energy"), ("bandgap_ev", "eV", "band gap")],
        labels=["conductive", "magnetic", "toxic", "brittle"],
        items=["recipe_a", "recipe_b", "recipe_c", "recipe_d", "recipe_e", "recipe_f", "recipe_g", "recipe_h"],
        image_subject="micrograph",
        image_object="grain",
        document="lab notebook entry",
        aspects={
            "crystallinity": ("crystalline", "sharp", "ordered", "lattice", "peaks"),
            "defects": ("voids", "cracks", "impurities", "defects", "pores"),
            "colour": ("transparent", "yellow", "opaque", "tinted", "clear"),
            "process": ("annealed", "quenched", "sintered", "milled", "coated"),
        },
        channels=[("strain_pct", "%"), ("stress_mpa", "MPa"), ("temperature_c", "degC")],
        series_entity="test rig",
    ),
    _d(
        slug="ecology",
        title="Wildlife ecology",
        entity="survey site",
        numeric=[
            ("canopy_cover_pct", "%", "canopy cover", ("uniform", 0, 100)),
            ("water_temp_c", "degC", "water temperature", ("normal", 12, 4)),
            ("elevation_m", "m", "site elevation", ("normal", 600, 250)),
            ("distance_to_road_m", "m", "distance to nearest road", ("lognormal", 6.0, 0.9)),
            ("shell_length_mm", "mm", "mean shell length", ("normal", 110, 20)),
            ("body_weight_g", "g", "mean body weight", ("lognormal", 5.0, 0.5)),
            ("trap_nights", "count", "camera trap nights", ("poisson", 20)),
            ("prey_density", "per ha", "prey density", ("lognormal", 2.0, 0.6)),
            ("rainfall_mm", "mm", "monthly rainfall", ("lognormal", 4.2, 0.5)),
            ("protected_area", "", "inside a protected area", ("binary", 0.4)),
        ],
        categorical=[
            ("habitat", "habitat type", ("forest", "grassland", "wetland", "scrub")),
            ("season", "survey season", ("spring", "summer", "autumn", "winter")),
        ],
        binary=[("species_present", "the target species is detected")],
        multiclass=[("species", "observed species", ("heron", "otter", "lynx", "beaver", "fox", "badger"))],
        regression=[
            ("population_index", "index", "population abundance index"),
            ("age_years", "years", "age estimate"),
        ],
        labels=["call_a", "call_b", "call_c", "call_d", "call_e"],
        items=["heron", "otter", "lynx", "beaver", "fox", "badger", "marten", "stoat"],
        image_subject="aerial photo tile",
        image_object="plant",
        document="ranger report",
        aspects={
            "sightings": ("sighted", "tracks", "droppings", "nest", "burrow"),
            "disturbance": ("logging", "hikers", "dogs", "vehicles", "noise"),
            "habitat": ("dense", "marsh", "meadow", "canopy", "undergrowth"),
            "health": ("healthy", "thin", "injured", "juvenile", "thriving"),
        },
        channels=[("hydrophone_pa", "Pa"), ("ambient_db", "dB")],
        series_entity="acoustic recorder",
    ),
    _d(
        slug="hospitality",
        title="Hotels and travel",
        entity="booking",
        numeric=[
            ("lead_time_days", "days", "days between booking and arrival", ("lognormal", 3.5, 0.9)),
            ("nightly_rate_usd", "USD", "average nightly rate", ("lognormal", 4.7, 0.4)),
            ("nights", "count", "nights booked", ("poisson", 3)),
            ("guests", "count", "guests", ("poisson", 2)),
            ("special_requests", "count", "special requests", ("poisson", 1)),
            ("prior_stays", "count", "previous stays", ("poisson", 0.7)),
            ("review_score", "1-10", "guest's average review score", ("normal", 8.1, 1.0)),
            ("booking_changes", "count", "changes to the booking", ("poisson", 0.5)),
            ("distance_to_center_km", "km", "hotel distance to centre", ("lognormal", 1.0, 0.6)),
            ("breakfast_included", "", "breakfast included", ("binary", 0.5)),
        ],
        categorical=[
            ("market_segment", "market segment", ("online_ta", "offline_ta", "direct", "corporate")),
            ("room_type", "room type", ("standard", "deluxe", "suite", "family")),
        ],
        binary=[("cancelled", "the booking is cancelled")],
        multiclass=[
            ("guest_rating", "post-stay rating", ("poor", "fair", "good", "very_good", "excellent", "outstanding"))
        ],
        regression=[
            ("total_spend_usd", "USD", "total spend during the stay"),
            ("stay_rating", "points", "stay rating"),
        ],
        labels=["late_checkout", "spa_used", "room_upgrade", "complaint"],
        items=["paris", "lisbon", "berlin", "rome", "madrid", "vienna", "prague", "oslo"],
        image_subject="room photo",
        image_object="stain",
        document="guest review",
        aspects={
            "cleanliness": ("clean", "dirty", "dusty", "spotless", "stains"),
            "staff": ("staff", "rude", "friendly", "reception", "helpful"),
            "noise": ("noisy", "loud", "party", "traffic", "thin"),
            "value": ("value", "overpriced", "cheap", "worth", "deal"),
        },
        channels=[("occupancy_pct", "%"), ("bookings", "count")],
        series_entity="hotel",
    ),
    _d(
        slug="social-media",
        title="Online communities",
        entity="post",
        numeric=[
            ("account_age_days", "days", "account age", ("lognormal", 5.5, 1.0)),
            ("karma", "points", "community karma", ("lognormal", 5.0, 1.5)),
            ("post_length_words", "words", "post length", ("lognormal", 3.5, 0.6)),
            ("followers", "count", "followers", ("lognormal", 4.0, 1.3)),
            ("posts_last_week", "count", "posts last week", ("poisson", 5)),
            ("hour_posted", "h", "hour of posting", ("uniform", 0, 24)),
            ("replies", "count", "replies received", ("poisson", 4)),
            ("links", "count", "links in post", ("poisson", 0.6)),
            ("verified", "", "verified account", ("binary", 0.1)),
            ("images_attached", "count", "images attached", ("poisson", 0.5)),
        ],
        categorical=[
            ("community", "sub-community", ("gaming", "news", "cooking", "finance", "sports")),
            ("client", "posting client", ("web", "ios", "android")),
        ],
        binary=[("is_insulting", "the comment insults another participant")],
        multiclass=[("sentiment", "sentiment", ("negative", "neutral", "positive", "mixed", "sarcastic", "unclear"))],
        regression=[("engagement_score", "points", "engagement score"), ("share_count", "count", "shares")],
        labels=["toxic", "obscene", "threat", "identity_attack", "spam"],
        items=["post_a", "post_b", "post_c", "post_d", "post_e", "post_f", "post_g", "post_h"],
        document="comment",
        aspects={
            "insult": ("idiot", "stupid", "loser", "pathetic", "clown"),
            "gratitude": ("thanks", "grateful", "appreciate", "kind", "generous"),
            "need": ("hungry", "broke", "rent", "paycheck", "struggling"),
            "humour": ("lol", "funny", "joke", "hilarious", "meme"),
        },
        channels=[("posts_per_hour", "count"), ("page_views", "count")],
        series_entity="forum page",
    ),
    _d(
        slug="education",
        title="Education",
        entity="student submission",
        numeric=[
            ("study_hours_week", "h", "weekly study hours", ("lognormal", 2.2, 0.5)),
            ("attendance_pct", "%", "attendance", ("normal", 85, 9)),
            ("prior_gpa", "0-4", "prior grade average", ("normal", 2.9, 0.5)),
            ("essay_words", "words", "essay length", ("lognormal", 6.0, 0.4)),
            ("revisions", "count", "draft revisions", ("poisson", 2)),
            ("forum_posts", "count", "course forum posts", ("poisson", 3)),
            ("late_submissions", "count", "late submissions", ("poisson", 1)),
            ("age_years", "years", "student age", ("normal", 20, 2.5)),
            ("tutoring_sessions", "count", "tutoring sessions", ("poisson", 1.5)),
            ("first_generation", "", "first-generation student", ("binary", 0.3)),
        ],
        categorical=[
            ("course", "course", ("math", "history", "biology", "literature")),
            ("prompt_id", "essay prompt", ("p1", "p2", "p3", "p4")),
        ],
        binary=[("passed_course", "the student passes the course")],
        multiclass=[("essay_score", "holistic essay score", ("s1", "s2", "s3", "s4", "s5", "s6"))],
        regression=[("final_grade", "points", "final grade"), ("quality_rating", "0-1", "rated answer quality")],
        labels=["plagiarism_check", "needs_support", "honours", "extension"],
        items=["cell_1", "cell_2", "cell_3", "cell_4", "cell_5", "cell_6", "cell_7", "cell_8"],
        document="essay",
        aspects={
            "argument": ("therefore", "because", "evidence", "however", "consequently"),
            "vocabulary": ("eloquent", "nuanced", "intricate", "profound", "meticulous"),
            "errors": ("alot", "becuase", "thier", "dont", "wich"),
            "gothic": ("shadow", "dread", "ghastly", "tomb", "midnight"),
        },
        channels=[("keystrokes_per_min", "count"), ("pause_s", "s")],
        series_entity="writing session",
    ),
    _d(
        slug="documents",
        title="Document processing",
        entity="scanned page",
        numeric=[
            ("page_count", "count", "pages in document", ("poisson", 4)),
            ("dpi", "dpi", "scan resolution", ("normal", 300, 40)),
            ("ink_coverage_pct", "%", "ink coverage", ("uniform", 2, 30)),
            ("skew_deg", "deg", "scan skew", ("normal", 0, 2)),
            ("age_years", "years", "document age", ("lognormal", 2.5, 0.8)),
            ("token_length", "chars", "token length", ("poisson", 6)),
            ("digits_share", "ratio", "share of digits", ("uniform", 0, 1)),
            ("font_size_pt", "pt", "font size", ("normal", 11, 1.5)),
            ("stamps", "count", "stamps on page", ("poisson", 0.5)),
            ("handwritten", "", "contains handwriting", ("binary", 0.3)),
        ],
        categorical=[
            ("token_script", "script of the token", ("latin", "cyrillic", "digits", "mixed")),
            ("source", "document source", ("invoice", "letter", "form", "receipt")),
        ],
        binary=[("needs_manual_review", "the page needs manual review")],
        multiclass=[
            ("token_class", "normalisation class", ("plain", "date", "cardinal", "measure", "money", "letters"))
        ],
        regression=[("similarity_score", "0-1", "phrase similarity"), ("ocr_error_rate", "%", "OCR error rate")],
        labels=["signature", "stamp", "table", "handwriting"],
        items=["para_1", "para_2", "para_3", "para_4", "para_5", "para_6", "para_7", "para_8"],
        image_subject="scanned text tile",
        image_object="stain",
        document="text fragment",
        aspects={
            "date": ("january", "monday", "1999", "2021", "march"),
            "measure": ("kg", "km", "cm", "litres", "mph"),
            "money": ("usd", "eur", "price", "dollars", "cents"),
            "plain": ("letter", "sincerely", "regards", "dear", "page"),
        },
        channels=[("scanner_light", ""), ("motor_speed", "rpm")],
        series_entity="scanner",
    ),
)


@lru_cache(maxsize=1)
def domains_by_slug() -> dict[str, Domain]:
    return {d.slug: d for d in DOMAINS}


def get_domain(slug: str) -> Domain:
    try:
        return domains_by_slug()[slug]
    except KeyError:
        raise KeyError(f"unknown domain {slug!r}; known: {', '.join(domains_by_slug())}") from None


def supports(domain: Domain, modality: str) -> bool:
    """Whether the domain has material for the modality (images need a subject, text aspects, series channels)."""
    if modality == "image":
        return bool(domain.image_subject)
    if modality == "text":
        return len(domain.aspects) >= 3
    if modality == "timeseries":
        return len(domain.channels) >= 2
    return True


FILLER_WORDS = _FILLER
